import Foundation
import LinkRelayServerCore
import LinkRelayServerStorage

/// The first start: a database without projects gets a `default` project and an admin key.
package enum Bootstrap {
    /// What the first start did.
    package enum Outcome: Sendable {
        /// Projects existed; nothing was made. `providedKeyIsKnown` says whether
        /// `LINKRELAY_ADMIN_KEY` (when set) is one of the database's admin keys: the variable is
        /// read only on a first start, so a key set later is not one unless it was made there.
        case alreadySetUp(providedKeyIsKnown: Bool?)
        /// Made the project and this admin key; `secret` is `nil` when the key came from the
        /// environment (the operator has it), else it must be printed once.
        case created(project: Project, key: APIKeyRecord, secret: String?)
    }

    /// Sets up an empty database. `providedKey` (from `LINKRELAY_ADMIN_KEY`) becomes the admin
    /// key when given; it must be shaped like a key (`lr_admin_…`).
    package static func run(store: any KeyStore & ProjectStore, providedKey: String?, at date: Date) async throws -> Outcome {
        if let providedKey { try validate(providedKey) }
        guard try await store.projects().isEmpty else {
            guard let providedKey else { return .alreadySetUp(providedKeyIsKnown: nil) }
            return .alreadySetUp(providedKeyIsKnown: try await isKnownAdminKey(providedKey, store: store))
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

extension Bootstrap {
    /// Checks that `providedKey` (`LINKRELAY_ADMIN_KEY`) is shaped like an admin key, before
    /// anything is opened or written.
    /// - Throws: ``BootstrapError`` saying the shape it must have (never the value).
    /// - Parameter source: where the key came from, as the message names it.
    package static func validate(_ providedKey: String, from source: String = "LINKRELAY_ADMIN_KEY") throws {
        guard let prefix = APIKeys.prefix(of: providedKey), prefix.hasPrefix("lr_admin_") else {
            throw BootstrapError(
                "\(source) is not an admin key: it must look like lr_admin_<8 hex>_<32 letters or digits> (make one with `linkrelay-server keys generate`)."
            )
        }
    }

    /// Whether `secret` is a live admin key of the database.
    static func isKnownAdminKey(_ secret: String, store: any KeyStore & ProjectStore) async throws -> Bool {
        guard case .valid = try await store.check(secret: secret, scopes: [.admin]) else { return false }
        return true
    }
}

/// A first start that cannot go on; the message says what to change.
package struct BootstrapError: Error, Sendable, CustomStringConvertible {
    /// What to change.
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}
