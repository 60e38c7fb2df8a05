import Foundation
@_spi(Backend) import LinkRelay

@_spi(Backend) extension LinkFortyBackend: CommandLineBackend {
    public static let commandLineName: String = "linkforty"
    public static let typicalLinkPath: String = "/k3m9x2qa/Xk9_2bQz"

    public static func make(domains: [String], schemes: Set<String>, apiKey: String?) throws -> LinkFortyBackend {
        let first = domains.first ?? ""
        guard let base = URL(string: "https://\(first)") else {
            throw DeepLinkError(.invalidConfiguration, "'\(first)' is not a host name.", backend: "linkforty")
        }
        return LinkFortyBackend(try .init(baseURL: base, apiKey: apiKey, linkDomains: Set(domains), appSchemes: schemes))
    }
}
