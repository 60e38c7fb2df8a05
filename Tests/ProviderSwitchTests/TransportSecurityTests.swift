import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import Testing

/// Every base URL an adapter can be configured with must be https, except on the developer's own
/// machine (loopback); the configuration is refused up front, naming the field, before any key
/// could travel in the clear.
@Suite("HTTPS for every configured base URL")
struct TransportSecurityTests {
    /// One configurable base URL: the field's name and how to build the adapter with a value.
    struct Field: CustomTestStringConvertible, Sendable {
        let name: String
        let build: @Sendable (URL) throws -> Void
        var testDescription: String { name }
    }

    static let fields: [Field] = [
        Field(name: "LinkForty baseURL") { _ = try LinkFortyBackend.Configuration(baseURL: $0, apiKey: "lf_key") },
        Field(name: "LimeLink apiBaseURL") { _ = try LimeLinkBackend.Configuration(apiKey: "ll_key", apiBaseURL: $0) },
        Field(name: "LimeLink legacyResolveURL") { _ = try LimeLinkBackend.Configuration(apiKey: "ll_key", legacyResolveURL: $0) },
        Field(name: "Dynalinks baseURL") {
            _ = try DynalinksBackend.Configuration(apiKey: "dl_key", baseURL: $0, linkDomains: ["acme.dynalinks.app"])
        },
        Field(name: "Paylisher analyticsHost") { _ = try PaylisherBackend.Configuration(apiKey: "phc_key", analyticsHost: $0) },
        Field(name: "Paylisher campaignResolveBaseURL") {
            _ = try PaylisherBackend.Configuration(apiKey: "phc_key", campaignResolveBaseURL: $0)
        },
        Field(name: "Paylisher deferredEndpoint") { _ = try PaylisherBackend.Configuration(apiKey: "phc_key", deferredEndpoint: $0) },
    ]

    @Test("plain http to a real host, other schemes and host-less URLs are refused", arguments: fields)
    func refused(_ field: Field) {
        for text in ["http://api.example.com", "http://10.0.0.5:8080", "ftp://api.example.com", "ws://api.example.com", "https:///x"] {
            let error = #expect(throws: DeepLinkError.self, "\(text)") { try field.build(URL(string: text)!) }
            #expect(error?.code == .invalidConfiguration, "\(text)")
        }
    }

    @Test("https anywhere, and plain http only to loopback, are accepted", arguments: fields)
    func accepted(_ field: Field) throws {
        for text in [
            "https://api.example.com", "https://api.example.com:8443/v1", "http://127.0.0.1:8642", "http://localhost:8080",
            "http://[::1]:9000",
        ] {
            try field.build(URL(string: text)!)
        }
    }
}
