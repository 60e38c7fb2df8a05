import Foundation
import LinkRelayServerCore

/// Where a module's resources are (the dashboard's templates and files, the API's
/// `openapi.json`): the folder SwiftPM builds beside the binary for each target that has
/// resources, `LinkRelayServer_<target>.resources` (`.bundle` on macOS). An install is the
/// binary and those folders, side by side (``all``).
///
/// Found without SwiftPM's generated `Bundle.module`, whose accessor calls `fatalError` when
/// the folder is missing: an upgrade that copied only the binary was killed by its first
/// request for `/openapi.json` (issue 63). `linkrelay-server serve` checks ``all`` before it
/// makes anything and refuses to start, in one line naming the folder, when one is not there.
package struct ServerResources: Sendable {
    /// The target whose resources these are.
    package let target: String
    /// What the folder holds, for the message when it is missing.
    package let contents: String
    /// The folder's name, as SwiftPM names a target's resources.
    package var folderName: String {
        #if canImport(Darwin)
            "LinkRelayServer_\(target).bundle"
        #else
            "LinkRelayServer_\(target).resources"
        #endif
    }

    /// The HTTP API's: `openapi.json`, the redirect's pages.
    package static let api = ServerResources(target: "LinkRelayServerHTTP", contents: "openapi.json, the redirect's pages")
    /// The dashboard's: its templates, stylesheet and script.
    package static let dashboard = ServerResources(target: "LinkRelayServerDashboard", contents: "the dashboard's templates")
    /// Every folder an install has.
    package static let all = [api, dashboard]

    /// The resources, found once per process per folder, or why not.
    package var folder: Result<Bundle, StartupError> { Self.found[target] ?? locate(in: Self.candidates()) }

    private static let found: [String: Result<Bundle, StartupError>] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.target, $0.locate(in: candidates())) })

    /// Where the folder may be: beside the running executable (through a symbolic link to it,
    /// too), and beside the main bundle (the test runner's folder).
    static func candidates() -> [URL] {
        var folders: [URL] = []
        if let executable = Bundle.main.executableURL {
            folders.append(executable.deletingLastPathComponent())
            folders.append(executable.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        folders.append(Bundle.main.bundleURL)
        return folders
    }

    /// The resources folder in the first of `folders` that has one.
    package func locate(in folders: [URL]) -> Result<Bundle, StartupError> {
        for folder in folders {
            let url = folder.appendingPathComponent(folderName, isDirectory: true)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue,
                let bundle = Bundle(url: url)
            {
                return .success(bundle)
            }
        }
        let expected = folders.first.map { $0.appendingPathComponent(folderName).path } ?? folderName
        return .failure(
            StartupError(
                "The server's resources are missing: \(expected) (\(contents)) must be beside the binary; an install is the binary and its LinkRelayServer_*.resources folders."
            ))
    }

    /// The URL of resource `name`, or the error saying what is missing.
    package func url(_ name: String, withExtension ext: String?) -> Result<URL, StartupError> {
        switch folder {
        case .failure(let error): return .failure(error)
        case .success(let bundle):
            guard let url = bundle.url(forResource: name, withExtension: ext) else {
                return .failure(
                    StartupError("The server's resources at \(bundle.bundlePath) have no \(name)\(ext.map { "." + $0 } ?? "")."))
            }
            return .success(url)
        }
    }
}
