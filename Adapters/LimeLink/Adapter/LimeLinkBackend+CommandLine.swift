import Foundation
@_spi(Backend) import LinkRelay

@_spi(Backend) extension LimeLinkBackend: CommandLineBackend {
    public static let commandLineName: String = "limelink"
    public static let typicalLinkPath: String = "/link/summer"

    public static func make(domains: [String], schemes: Set<String>, apiKey: String?) throws -> LimeLinkBackend {
        // LimeLink's own domain is claimed by the adapter; only the app's custom domains are passed.
        let own = domains.filter { !($0 == "limelink.org" || $0.hasSuffix(".limelink.org")) }
        return LimeLinkBackend(try .init(apiKey: apiKey ?? "doctor", linkDomains: Set(own), appSchemes: schemes))
    }
}
