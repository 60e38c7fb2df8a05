import Foundation

package struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    package enum Kind: Sendable, Hashable {
        /// The database was made by a newer server (its schema version is higher than this one knows).
        case newerSchema(found: Int, known: Int)
        /// A statement failed.
        case failed
        /// A unique value (a link's code, a key's prefix) is taken.
        case conflict
        /// The database location is not one this server can open.
        case unusableLocation
    }

    /// What kind of failure.
    package var kind: Kind
    /// A sentence for a log or an operator.
    package var message: String

    /// A failure of `kind`, described by `message`.
    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The database was made by a newer server.
    package static func newerSchema(found: Int, known: Int) -> StoreError {
        StoreError(
            .newerSchema(found: found, known: known),
            "The database is at schema version \(found); this server knows up to \(known). Run a newer server.")
    }

    package var description: String { message }
}
