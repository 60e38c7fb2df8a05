/// The name of a backend: which provider a ``DeepLink`` came from, and the folder its persisted
/// values live in.
///
/// Each adapter declares its own (`BackendID.linkForty`, …) in an extension.
public struct BackendID: RawRepresentable, Sendable, Hashable, Codable,
    ExpressibleByStringLiteral, CustomStringConvertible
{
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public var description: String { rawValue }

    /// ``LocalBackend``: links parsed on the device, with no provider.
    public static let local: BackendID = "local"
}
