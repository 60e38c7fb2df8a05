import Foundation

/// A backend the `linkrelay` tool can make from what its command line names: the provider,
/// the app's link domains and schemes, and a key. Each adapter conforms in its own folder, so
/// the tool lists providers and makes backends without naming one.
@_spi(Backend) public protocol CommandLineBackend: DeepLinkBackend {
    /// The provider's name on the command line (`linkforty`).
    static var commandLineName: String { get }
    /// A path typical of the provider's links (`/link/summer`), for the links to check when
    /// none are given.
    static var typicalLinkPath: String { get }
    /// Whether the backend needs at least one link domain. Default `true`.
    static var needsLinkDomain: Bool { get }
    /// The backend for `domains` (the first is the provider's API host where it has one) and
    /// `schemes`, with `apiKey`, or a placeholder when `nil` (the tool then makes no request).
    static func make(domains: [String], schemes: Set<String>, apiKey: String?) throws -> Self
}

@_spi(Backend) extension CommandLineBackend {
    public static var needsLinkDomain: Bool { true }
}

@_spi(Backend) extension LocalBackend: CommandLineBackend {
    public static let commandLineName: String = "local"
    public static let typicalLinkPath: String = "/products/42"
    public static let needsLinkDomain: Bool = false

    public static func make(domains: [String], schemes: Set<String>, apiKey: String?) throws -> LocalBackend {
        LocalBackend(.init(schemes: schemes, hosts: Set(domains)))
    }
}
