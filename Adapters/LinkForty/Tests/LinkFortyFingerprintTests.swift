import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayTesting
import Testing

@testable import LinkRelayLinkForty

/// With the fingerprint withheld (the user has not allowed tracking): the install body keeps
/// only what the protocol requires and says `"fingerprint": false`; a resolve carries no `fp_*`.
@Suite("LinkForty without a fingerprint")
struct LinkFortyFingerprintTests {
    func withheld() throws -> Harness {
        var harness = try Harness(device: newYorkPhone.withholdingFingerprint())
        var context = harness.context
        context.fingerprintWithheld = true
        harness = Harness(transport: harness.transport, backend: harness.backend, context: context)
        return harness
    }

    @Test("the install body: the user agent, platform and versions, no time zone, language, screen or device id; fingerprint false")
    func installBody() async throws {
        let harness = try withheld()
        harness.transport.stub(.post, "/api/sdk/v1/install", .json(#"{"installId":"x","attributed":false,"matchedFactors":[]}"#))
        _ = try await harness.backend.matchInstall(context: harness.context)
        #expect(
            try json(harness.transport.requests.first?.body) == [
                "userAgent": "Acme Shop/2.3.0 iOS/17.4.1", "platform": "iOS", "platformVersion": "17.4.1", "appVersion": "2.3.0",
                "attributionWindowHours": 168, "sdkName": "linkrelay", "sdkVersion": .string(LinkRelayVersion.string), "fingerprint": false,
            ])
    }

    @Test("a resolve carries no fingerprint query")
    func resolve() async throws {
        let harness = try withheld()
        harness.transport.stub(.get, "/api/sdk/v1/resolve/Qp3rT7wx", .json(#"{"shortCode":"Qp3rT7wx","linkId":"l"}"#))
        _ = try await harness.backend.resolve(url("https://go.acme.app/Qp3rT7wx"), context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.url.query == nil)
        // The same resolve with the fingerprint allowed carries it.
        let allowed = try Harness()
        allowed.transport.stub(.get, "/api/sdk/v1/resolve/Qp3rT7wx", .json(#"{"shortCode":"Qp3rT7wx","linkId":"l"}"#))
        _ = try await allowed.backend.resolve(url("https://go.acme.app/Qp3rT7wx"), context: allowed.context)
        #expect(allowed.transport.requests.first?.url.query?.contains("fp_tz=") == true)
    }
}
