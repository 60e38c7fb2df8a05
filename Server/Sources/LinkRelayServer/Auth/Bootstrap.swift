import Foundation

/// The first start: a database without projects gets a `default` project and an admin key.
public enum Bootstrap {
    /// What the first start did.
    public enum Outcome: Sendable {
        /// Projects existed; nothing was made.
        case alreadySetUp
        /// Made the project and this admin key; `secret` is `nil` when the key came from the
        /// environment (the operator has it), else it must be printed once.
        case created(project: Project, key: APIKeyRecord, secret: String?)
    }

    /// Sets up an empty database. `providedKey` (from `LINKRELAY_ADMIN_KEY`) becomes the admin
    /// key when given; it must be shaped like a key (`lr_admin_…`).
    public static func run(store: any ServerStore, providedKey: String?, at date: Date) async throws -> Outcome {
        guard try await store.projects().isEmpty else { return .alreadySetUp }
        if let providedKey {
            guard let prefix = APIKeys.prefix(of: providedKey), prefix.hasPrefix("lr_admin_") else {
                throw BootstrapError(
                    "LINKRELAY_ADMIN_KEY is not an admin key: it must look like lr_admin_<8 hex>_<32 letters or digits> (make one with `linkrelay-server keys generate`).")
            }
        }
        let project = try await store.createProject(name: "default", at: date)
        if let providedKey, let prefix = APIKeys.prefix(of: providedKey) {
            let record = APIKeyRecord(
                id: "key_" + APIKeys.randomString(16, alphabet: APIKeys.base62), projectID: project.id, prefix: prefix,
                secretHash: APIKeys.hash(providedKey), scope: .admin, name: "admin (from LINKRELAY_ADMIN_KEY)", createdAt: date)
            try await store.insertKey(record)
            return .created(project: project, key: record, secret: nil)
        }
        let issued = APIKeys.issue(project: project.id, scope: .admin, name: "admin (first start)", at: date)
        try await store.insertKey(issued.record)
        return .created(project: project, key: issued.record, secret: issued.secret)
    }
}

/// A first start that cannot go on; the message says what to change.
public struct BootstrapError: Error, Sendable, CustomStringConvertible {
    /// What to change.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
