import Foundation

/// linkrelay-demo: the main job. By default it tells the LinkForty, LimeLink and Dynalinks
/// stories over the provider simulator; `--local` tours link delivery with `LocalBackend`.
@main
struct Demo {
    static func main() async {
        if CommandLine.arguments.contains("--local") {
            await LocalDemo.run()
        } else {
            do {
                try await LinkFortyDemo.run()
                try await LimeLinkDemo.run()
                try await DynalinksDemo.run()
            } catch {
                FileHandle.standardError.write(Data("linkrelay-demo: \(error)\n".utf8))
                exit(1)
            }
        }
    }
}
