/// The user agents the matcher's tests tap and install with.
enum Agents {
    /// An app's own agent (the SDK's requests, or a client copying it): LinkForty Core's key `|`.
    static let app = "AcmeShop/412 CFNetwork/1494.0.7 Darwin/23.4.0"
    /// Safari on an iPhone, as a tap in the browser sends it.
    static let safari =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
}
