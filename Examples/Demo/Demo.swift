import Foundation
import ShopApp

/// linkrelay-demo: the main job. By default it tells the LinkForty, LimeLink and Dynalinks
/// stories over the provider simulator, then runs one and the same app code against each of
/// the four providers side by side, and ends with an existing LinkForty SDK user updating to
/// LinkRelay with Paylisher. `--provider NAME` runs one provider's story and column;
/// `--sandbox URL` runs the side-by-side story against a running `linkrelay-sandbox` over HTTP;
/// `--local` tours link delivery with `LocalBackend`; `--debug` shows every client's debug log
/// (each provider call with its status and duration) in line with the story.
@main
struct Demo {
    static func main() async {
        let arguments = ProcessInfo.processInfo.arguments
        if arguments.contains("--local") {
            await LocalDemo.run()
            return
        }
        var providers = ShopWorld.Provider.allCases
        if let index = arguments.firstIndex(of: "--provider") {
            let name = index + 1 < arguments.count ? arguments[index + 1].lowercased() : ""
            guard let chosen = providers.first(where: { $0.rawValue.lowercased() == name }) else {
                let names = providers.map { $0.rawValue.lowercased() }.joined(separator: ", ")
                FileHandle.standardError.write(Data("linkrelay-demo: --provider takes one of: \(names)\n".utf8))
                exit(2)
            }
            providers = [chosen]
        }
        do {
            if let index = arguments.firstIndex(of: "--sandbox") {
                guard index + 1 < arguments.count, let sandboxURL = URL(string: arguments[index + 1]), sandboxURL.host != nil else {
                    FileHandle.standardError.write(
                        Data("linkrelay-demo: --sandbox takes the sandbox's URL, e.g. http://127.0.0.1:8642\n".utf8))
                    exit(2)
                }
                try await SwitchDemo.run(providers, sandboxURL: sandboxURL)
                return
            }
            for provider in providers {
                switch provider {
                case .linkForty: try await LinkFortyDemo.run()
                case .limeLink: try await LimeLinkDemo.run()
                case .dynalinks: try await DynalinksDemo.run()
                case .paylisher: break  // its story comes with its lifecycle events; it is in the table
                }
            }
            try await SwitchDemo.run(providers)
            if providers.contains(.paylisher) { try await MigrationDemo.run() }
        } catch {
            FileHandle.standardError.write(Data("linkrelay-demo: \(error)\n".utf8))
            exit(1)
        }
    }
}
