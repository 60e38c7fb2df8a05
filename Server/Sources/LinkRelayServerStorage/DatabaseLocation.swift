import Foundation
import LinkRelayServerCore
import Logging

/// Where the data lives, as `--database` names it: `sqlite:PATH` (the default,
/// `sqlite:linkrelay.sqlite`) or `postgres://user:password@host:port/database`.
package enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// An SQLite file (`:memory:` for a database that lives as long as the process).
    case sqlite(path: String)
    /// A PostgreSQL server.
    case postgres(URL)

    /// Reads `text`; `nil` when it is neither form.
    package init?(_ text: String) {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { return nil }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://"), let url = URL(string: text), url.host != nil {
            self = .postgres(url)
        } else {
            return nil
        }
    }

    /// The location without its password, for logs.
    package var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let url):
            "postgres://\(url.user.map { $0 + "@" } ?? "")\(url.host ?? ""):\(url.port ?? 5432)\(url.path)"
        }
    }

    /// Opens the store. With `create` `false` (commands that read or change a database, such as
    /// `keys` and `stats`), a missing SQLite file is an error instead of a new empty database.
    /// - Parameter serving: whether the store serves requests (PostgreSQL: a few connections
    ///   kept warm, ``PostgresEngine/servingConnections``).
    package func open(create: Bool = true, serving: Bool = false, logger: Logger) async throws -> any ServerStore {
        switch self {
        case .sqlite(let path):
            guard path != ":memory:" else { return try await SQLStore.sqlite(path: path, create: create) }
            try Self.checkMarker(path)
            let store = try await SQLStore.sqlite(path: path, create: create)
            Self.placeMarker(path)
            return store
        case .postgres(let url):
            return SQLStore(
                engine: try PostgresEngine.connect(url, warmConnections: serving ? PostgresEngine.servingConnections : 0, logger: logger))
        }
    }

    /// The file beside an SQLite database that says it was set up here: `linkrelay.sqlite`'s is
    /// `linkrelay.sqlite.setup`. With the file gone and the marker there, the server refuses to
    /// start instead of making an empty database in its place (issue 63, 13: a deleted file
    /// came back as a new project, its links and keys silently gone).
    package static func markerPath(for path: String) -> String { path + ".setup" }

    /// - Throws: ``StoreError`` (`unusableLocation`) when the database is missing but its marker
    ///   is there.
    static func checkMarker(_ path: String) throws {
        let manager = FileManager.default
        guard !manager.fileExists(atPath: path), manager.fileExists(atPath: markerPath(for: path)) else { return }
        throw StoreError(
            .unusableLocation,
            "The database \(path) is missing, but \(markerPath(for: path)) says one was set up here: restore it from a backup (Server/scripts/restore), or delete that file to start an empty database."
        )
    }

    /// Places the marker when it is missing (a database made now, or one made by an earlier
    /// server); best effort: a database that opened is usable without it.
    static func placeMarker(_ path: String) {
        let marker = markerPath(for: path)
        guard !FileManager.default.fileExists(atPath: marker) else { return }
        let text =
            "This file says a LinkRelay Server database was set up at \(URL(fileURLWithPath: path).lastPathComponent) (on \(Date().formatted(Date.ISO8601FormatStyle()))).\nWhile it is here, the server refuses to start without that database instead of making an empty one.\n"
        _ = FileManager.default.createFile(atPath: marker, contents: Data(text.utf8))
    }

    /// Why an SQLite file cannot be opened, said before SQLite's own "unable to open database
    /// file": its folder is missing, is not a folder, or cannot be written (SQLite writes its
    /// journal beside the file); the file is missing and may not be made; it is a folder.
    static func checkSQLitePath(_ path: String, create: Bool) throws {
        let manager = FileManager.default
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isFolder) {
            guard !isFolder.boolValue else {
                throw StoreError(.unusableLocation, "Cannot open the SQLite database at \(path): it is a folder, not a file.")
            }
        } else if !create {
            throw StoreError(
                .unusableLocation,
                "There is no database at \(path) (\(url.path)): start the server there first, or name the file with --database sqlite:PATH."
            )
        }
        guard manager.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw StoreError(.unusableLocation, "Cannot open the SQLite database at \(path): the folder \(folder) does not exist.")
        }
        guard isFolder.boolValue else {
            throw StoreError(.unusableLocation, "Cannot open the SQLite database at \(path): \(folder) is not a folder.")
        }
        guard manager.isWritableFile(atPath: folder) else {
            throw StoreError(
                .unusableLocation,
                "Cannot open the SQLite database at \(path): the folder \(folder) is not writable (SQLite keeps its journal beside the file)."
            )
        }
    }
}
