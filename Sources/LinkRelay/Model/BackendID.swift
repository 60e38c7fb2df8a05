/// The name of a backend: which provider a ``DeepLink`` came from, and the folder its persisted
/// values live in.
///
/// Each adapter declares its own (`BackendID.linkForty`, …) in an extension.
public struct BackendID: RawRepresentable, Sendable, Hashable, Codable,
    ExpressibleByStringLiteral, CustomStringConvertible
{
    /// The name, such as `linkforty`.
    public let rawValue: String

    /// A backend id named `rawValue`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A backend id from a literal: `let id: BackendID = "acme"`.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public var description: String { rawValue }

    /// ``LocalBackend``: links parsed on the device, with no provider.
    public static let local: BackendID = "local"
}
