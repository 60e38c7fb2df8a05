import Foundation
@_spi(Backend) import LinkRelay

@_spi(Backend) extension DynalinksBackend: CommandLineBackend {
    public static let commandLineName: String = "dynalinks"
    public static let typicalLinkPath: String = "/promo"

    public static func make(domains: [String], schemes: Set<String>, apiKey: String?) throws -> DynalinksBackend {
        DynalinksBackend(try .init(apiKey: apiKey ?? "doctor", linkDomains: Set(domains), appSchemes: schemes))
    }
}
