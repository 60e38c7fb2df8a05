import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelaySimulator

/// One provider, set up in the simulator with the shop's links: product 42 (also the link
/// clicked before install), and the wallet, gated behind sign-in. Only this setup differs
/// between providers; ``ShopApp`` does not.
public struct ShopWorld: Sendable {
    public enum Provider: String, CaseIterable, Sendable {
        case linkForty = "LinkForty"
        case limeLink = "LimeLink"
        case dynalinks = "Dynalinks"
        case paylisher = "Paylisher"
    }

    public static let appScheme = "shopapp"

    public let provider: Provider
    public let backend: any DeepLinkBackend
    /// A universal link to product 42, as this provider's links look.
    public let productLink: URL
    /// A link to the wallet, which needs a signed-in user.
    public let walletLink: URL
    /// The app's own custom-scheme link to the cart.
    public let cartLink = URL(string: "shopapp://cart?coupon=SPRING")!
    /// Records the tap on the product link before the app was installed.
    public let recordWebClick: @Sendable () -> Void

    public init(_ provider: Provider, simulator: ProviderSimulator, phone: DeviceInfo) throws {
        self.provider = provider
        let now = simulator.clock.currentDate
        switch provider {
        case .linkForty:
            let server = simulator.addLinkForty(host: "go.shop.example")
            server.createLink(
                shortCode: "p42", deepLinkPath: "/product/42", appScheme: Self.appScheme,
                deepLinkParameters: ["route": "product", "productId": "42"])
            server.createLink(shortCode: "wallet", deepLinkPath: "/wallet", appScheme: Self.appScheme)
            backend = LinkFortyBackend(
                try .init(baseURL: URL(string: "https://go.shop.example")!, apiKey: "lf_key", appSchemes: [Self.appScheme]))
            productLink = URL(string: "https://go.shop.example/p42")!
            walletLink = URL(string: "https://go.shop.example/wallet")!
            recordWebClick = { server.recordWebClick(shortCode: "p42", from: phone, ip: simulator.clientIP, at: now) }
        case .limeLink:
            let server = simulator.addLimeLink(apiKey: "lk_key")
            server.createLink(project: "shop", suffix: "p42", uri: "shopapp://product/42")
            server.createLink(project: "shop", suffix: "wallet", uri: "shopapp://wallet")
            backend = LimeLinkBackend(try .init(apiKey: "lk_key", appSchemes: [Self.appScheme]))
            productLink = URL(string: "https://shop.limelink.org/link/p42")!
            walletLink = URL(string: "https://shop.limelink.org/link/wallet")!
            recordWebClick = { server.recordWebClick(url: URL(string: "https://shop.limelink.org/link/p42")!, from: phone) }
        case .dynalinks:
            let server = simulator.addDynalinks(clientAPIKey: "dyn_key", projectHost: "shop.dynalinks.app")
            server.createLink(path: "/p42", url: "https://shop.example/product/42", deepLinkValue: "/product/42")
            server.createLink(path: "/w", url: "https://shop.example/wallet", deepLinkValue: "/wallet")
            backend = DynalinksBackend(
                try .init(clientAPIKey: "dyn_key", linkDomains: ["shop.dynalinks.app"], appSchemes: [Self.appScheme]))
            productLink = URL(string: "https://shop.dynalinks.app/p42")!
            walletLink = URL(string: "https://shop.dynalinks.app/w")!
            recordWebClick = { server.recordWebClick(path: "/p42", from: phone, ip: simulator.clientIP, at: now) }
        case .paylisher:
            let server = simulator.addPaylisher(apiKey: "phc_key")
            server.createCampaign(keyName: "p42", title: "Product 42", scheme: "shopapp://product/42")
            backend = PaylisherBackend(
                try .init(apiKey: "phc_key", appSchemes: [Self.appScheme], universalLinkDomains: ["shop.example"]))
            productLink = URL(string: "https://link.paylisher.com/p42")!
            walletLink = URL(string: "https://shop.example/wallet")!
            recordWebClick = {
                server.recordWebClick(url: URL(string: "shopapp://product/42")!, campaignKey: "p42", from: phone, at: now)
            }
        }
    }
}
