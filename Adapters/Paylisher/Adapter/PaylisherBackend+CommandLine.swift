import Foundation
@_spi(Backend) import LinkRelay

@_spi(Backend) extension PaylisherBackend: CommandLineBackend {
    public static let commandLineName: String = "paylisher"
    public static let typicalLinkPath: String = "/SUMMER"

    public static func make(domains: [String], schemes: Set<String>, apiKey: String?) throws -> PaylisherBackend {
        PaylisherBackend(try .init(apiKey: apiKey ?? "doctor", appSchemes: schemes, linkDomains: Set(domains)))
    }
}
