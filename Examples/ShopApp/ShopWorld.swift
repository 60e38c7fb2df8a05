import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelaySimulator

/// One provider, set up in a sandbox with the shop's links: product 42 (also the link clicked
/// before install), and the wallet, gated behind sign-in. Only this setup differs between
/// providers; ``ShopApp`` does not.
///
/// The sandbox is either LinkRelaySimulator's ``Sandbox`` in process, or a running
/// `linkrelay-sandbox` scripted over its admin API (``SandboxAdminClient``): the same calls.
public struct ShopWorld: Sendable {
    public enum Provider: String, CaseIterable, Sendable {
        case linkForty = "LinkForty"
        case limeLink = "LimeLink"
        case dynalinks = "Dynalinks"
        case paylisher = "Paylisher"
    }

    public static let appScheme = "shopapp"

    /// The shop's hosts and keys, for an in-process sandbox.
    public static let settings = {
        var settings = SandboxSettings()
        settings.linkFortyHost = "go.shop.example"
        settings.limeLinkAPIKey = "lk_key"
        settings.dynalinksAPIKey = "dyn_key"
        settings.dynalinksProjectHost = "shop.dynalinks.app"
        settings.paylisherAPIKey = "phc_key"
        return settings
    }()

    public let provider: Provider
    public let backend: any DeepLinkBackend
    /// A universal link to product 42, as this provider's links look.
    public let productLink: URL
    /// A link to the wallet, which needs a signed-in user.
    public let walletLink: URL
    /// The app's own custom-scheme link to the cart.
    public let cartLink = URL(string: "shopapp://cart?coupon=SPRING")!
    /// Records the tap on the product link before the app was installed.
    public let recordWebClick: @Sendable () async throws -> Void

    /// Creates the shop's links for `provider` in `sandbox`, and the backend an app would build
    /// with the sandbox's hosts and keys.
    public init(_ provider: Provider, sandbox: any SandboxControl, phone: DeviceInfo) async throws {
        self.provider = provider
        let settings = try await sandbox.describe().settings
        switch provider {
        case .linkForty:
            let host = settings.linkFortyHost
            try await sandbox.createLink(
                SandboxAPI.LinkFortyLink(
                    shortCode: "p42", deepLinkPath: "/product/42", appScheme: Self.appScheme,
                    deepLinkParameters: ["route": "product", "productId": "42"]))
            try await sandbox.createLink(SandboxAPI.LinkFortyLink(shortCode: "wallet", deepLinkPath: "/wallet", appScheme: Self.appScheme))
            backend = LinkFortyBackend(try .init(baseURL: URL(string: "https://\(host)")!, apiKey: "lf_key", appSchemes: [Self.appScheme]))
            productLink = URL(string: "https://\(host)/p42")!
            walletLink = URL(string: "https://\(host)/wallet")!
        case .limeLink:
            let domain = settings.limeLinkDomain
            try await sandbox.createLink(SandboxAPI.LimeLinkLink(project: "shop", suffix: "p42", uri: "shopapp://product/42"))
            try await sandbox.createLink(SandboxAPI.LimeLinkLink(project: "shop", suffix: "wallet", uri: "shopapp://wallet"))
            backend = LimeLinkBackend(
                try .init(
                    apiKey: settings.limeLinkAPIKey, apiBaseURL: URL(string: "https://\(domain)/")!, providerDomain: domain,
                    appSchemes: [Self.appScheme]))
            productLink = URL(string: "https://shop.\(domain)/link/p42")!
            walletLink = URL(string: "https://shop.\(domain)/link/wallet")!
        case .dynalinks:
            let host = settings.dynalinksProjectHost
            try await sandbox.createLink(
                SandboxAPI.DynalinksLink(path: "/p42", url: "https://shop.example/product/42", deepLinkValue: "/product/42"))
            try await sandbox.createLink(SandboxAPI.DynalinksLink(path: "/w", url: "https://shop.example/wallet", deepLinkValue: "/wallet"))
            backend = DynalinksBackend(
                try .init(
                    apiKey: settings.dynalinksAPIKey, baseURL: URL(string: "https://\(settings.dynalinksAPIHost)/api/v1")!,
                    linkDomains: [host], appSchemes: [Self.appScheme]))
            productLink = URL(string: "https://\(host)/p42")!
            walletLink = URL(string: "https://\(host)/w")!
        case .paylisher:
            try await sandbox.createCampaign(
                SandboxAPI.PaylisherCampaign(keyName: "p42", title: "Product 42", scheme: "shopapp://product/42"))
            backend = PaylisherBackend(
                try .init(
                    apiKey: settings.paylisherAPIKey, analyticsHost: URL(string: "https://\(settings.paylisherAnalyticsHost)")!,
                    campaignResolveBaseURL: URL(string: "https://\(settings.paylisherAPIHost)")!,
                    shortLinkHosts: settings.paylisherShortLinkHosts, appSchemes: [Self.appScheme], linkDomains: ["shop.example"]))
            productLink = URL(string: "https://\(settings.paylisherShortLinkHosts.sorted().first ?? "link.paylisher.com")/p42")!
            walletLink = URL(string: "https://shop.example/wallet")!
        }
        let click: (SandboxAPI.WebClick, SandboxProvider) =
            switch provider {
            case .linkForty: (.init(url: productLink, device: phone), .linkForty)
            case .limeLink: (.init(url: productLink, device: phone), .limeLink)
            case .dynalinks: (.init(url: productLink, device: phone), .dynalinks)
            case .paylisher: (.init(url: URL(string: "shopapp://product/42")!, device: phone, campaignKey: "p42"), .paylisher)
            }
        recordWebClick = { try await sandbox.recordWebClick(click.0, on: click.1) }
    }

    /// The transport a Debug build uses to reach a running sandbox: every provider host it
    /// serves is sent there by ``HostRewritingTransport``.
    public static func transport(to sandbox: SandboxAPI.Description) -> HostRewritingTransport {
        HostRewritingTransport(hosts: Set(sandbox.providers.flatMap(\.hosts)), to: sandbox.baseURL)
    }
}
