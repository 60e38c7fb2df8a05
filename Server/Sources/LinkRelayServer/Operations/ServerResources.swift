import Foundation
import LinkRelayServerCore
import LinkRelayServerStorage

/// Where the server's resources are (the dashboard's templates and files, `openapi.json`): the
/// folder SwiftPM builds beside the binary, `LinkRelayServer_LinkRelayServer.resources`
/// (`.bundle` on macOS). An install is the binary and that folder, side by side.
///
/// Found without SwiftPM's generated `Bundle.module`, whose accessor calls `fatalError` when
/// the folder is missing: an upgrade that copied only the binary was killed by its first
/// request for `/openapi.json` (issue 63). `linkrelay-server serve` checks ``folder`` before it
/// makes anything and refuses to start, in one line naming the folder, when it is not there.
package enum ServerResources {
    /// The folder's name, as SwiftPM names a target's resources.
    package static let folderName: String = {
        #if canImport(Darwin)
            "LinkRelayServer_LinkRelayServer.bundle"
        #else
            "LinkRelayServer_LinkRelayServer.resources"
        #endif
    }()

    /// The resources, found once per process, or why not.
    package static let folder: Result<Bundle, StartupError> = locate(in: candidates())

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
    static func locate(in folders: [URL]) -> Result<Bundle, StartupError> {
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
                "The server's resources are missing: \(expected) (the dashboard's templates and openapi.json) must be beside the binary; an install is the binary and that folder."
            ))
    }

    /// The URL of resource `name`, or the error saying what is missing.
    static func url(_ name: String, withExtension ext: String?) -> Result<URL, StartupError> {
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
