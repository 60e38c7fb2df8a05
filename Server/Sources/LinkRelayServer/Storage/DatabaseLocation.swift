import Foundation
import Logging

/// Where the data lives, as `--database` names it: `sqlite:PATH` (the default,
/// `sqlite:linkrelay.sqlite`) or `postgres://user:password@host:port/database`.
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// An SQLite file (`:memory:` for a database that lives as long as the process).
    case sqlite(path: String)
    /// A PostgreSQL server.
    case postgres(URL)

    /// Reads `text`; `nil` when it is neither form.
    public init?(_ text: String) {
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
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let url):
            "postgres://\(url.user.map { $0 + "@" } ?? "")\(url.host ?? ""):\(url.port ?? 5432)\(url.path)"
        }
    }

    /// Opens the store.
    public func open(logger: Logger) async throws -> any ServerStore {
        switch self {
        case .sqlite(let path):
            return try await SQLStore.sqlite(path: path, logger: logger)
        case .postgres(let url):
            return SQLStore(engine: try await PostgresEngine.connect(url, logger: logger))
        }
    }
}
