import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage

extension InstallReport {
    /// Reads `body`, each field checked (a `400` naming the first that is wrong).
    /// - Parameters:
    ///   - clientAddress: the address the request came from (``ServerContext/clientAddress``).
    ///   - matchPrivateNetworks: whether a private address has a network to match in.
    init(_ body: JSONBody, clientAddress: String?, matchPrivateNetworks: Bool) throws {
        let userAgent = try body.string("userAgent", required: true, maxLength: 512)
        let timezone = try body.string("timezone", maxLength: 64)
        let language = try body.string("language", maxLength: 64)
        let screenWidth = try body.integer("screenWidth", in: 0...100_000)
        let screenHeight = try body.integer("screenHeight", in: 0...100_000)
        let platform = try body.string("platform", maxLength: 32)
        let platformVersion = try body.string("platformVersion", maxLength: 32)
        let deviceID = try body.string("deviceId", maxLength: 128)
        let attributionWindowHours = try body.integer("attributionWindowHours", in: 1...2160)
        _ = try body.string("sdkName", maxLength: 50)
        _ = try body.string("sdkVersion", maxLength: 50)
        let reportedIP = try body.string("ipAddress", maxLength: 64)
        // Up to 256 characters are read; one that is not a token of this server is answered
        // `unknown` without asking the database.
        let clickToken = try body.string("clickToken", maxLength: 256)
        // Apple's are about 1 KB of Base64: anything else is refused, naming the field.
        let appleAdsToken = try body.string("appleAdsToken", maxLength: 4096)
        let allowsFingerprint = try body.bool("fingerprint") ?? true
        if let token = appleAdsToken, token.isEmpty || !token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw APIError.field("appleAdsToken", "must be the token AdServices gave, as it gave it")
        }
        // Without the fingerprint, nothing to match on and nothing kept: not the address, not
        // what the app sent.
        let signals =
            allowsFingerprint
            ? DeviceSignals(
                ip: clientAddress,
                networkPrefix: clientAddress.flatMap { ClientAddress.networkPrefix(of: $0, includingPrivate: matchPrivateNetworks) },
                userAgent: userAgent, timezone: timezone, language: language, screenWidth: screenWidth, screenHeight: screenHeight)
            : DeviceSignals(ip: nil, networkPrefix: nil, userAgent: userAgent)
        self.init(
            signals: signals, platform: platform, platformVersion: platformVersion, deviceID: deviceID,
            attributionWindowHours: attributionWindowHours, reportedIP: reportedIP, clickToken: clickToken)
        self.appleAdsToken = appleAdsToken
        self.allowsFingerprint = allowsFingerprint
    }
}

/// The install's answer (``InstallAnswer``).
extension LinkRelayServerCore.InstallAttribution: ResponseGenerator {
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        ServerHTTP.json(InstallAnswer(self))
    }
}
