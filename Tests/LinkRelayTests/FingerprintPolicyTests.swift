import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// No fingerprint unless the user allowed tracking (FingerprintPolicy.whenTrackingAuthorized):
/// no install match by fingerprint, no device signals in any request, certain links still
/// delivered; with tracking allowed, as always.
@Suite("The fingerprint only with tracking allowed", .timeLimit(.minutes(1)))
struct FingerprintPolicyTests {
    final class Authorization: TrackingAuthorizationSource, Sendable {
        let authorized: Locked<Bool>
        init(_ authorized: Bool) { self.authorized = Locked(authorized) }
        func isTrackingAuthorized() -> Bool { authorized.withLock { $0 } }
    }

    static let phone = DeviceInfo(
        screen: .init(width: 393, height: 852, scale: 3), osName: "iOS", osVersion: "17.4.1", deviceModel: "iPhone16,1",
        timeZoneIdentifier: "America/New_York", preferredLanguages: ["en-US"], regionCode: "US", appVersion: "2.3.0", appBuild: "412")

    func client(_ backend: InMemoryBackend, _ authorization: Authorization, pasteboard: InMemoryPasteboard? = nil) -> DeepLinkClient {
        makeClient(backend) {
            $0.retryPolicy = .none
            $0.deviceInfo = StaticDeviceInfo(Self.phone)
            $0.fingerprinting = .whenTrackingAuthorized(by: authorization)
            if let pasteboard { $0.pasteboardCheck = PasteboardCheck(pasteboard: pasteboard) }
        }
    }

    @Test("not allowed: no install match is asked for (organic), and a resolve carries no screen, languages, model or identifiers")
    func withheld() async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        let client = client(backend, Authorization(false))
        await client.start()
        #expect(backend.installMatchCount == 0)
        #expect(await client.installOutcome() == .organic(nil))
        _ = try await client.resolve(url("https://go.acme.app/sale"))
        let context = try #require(backend.contexts.last)
        #expect(context.fingerprintWithheld)
        #expect(context.device.screen == nil && context.device.preferredLanguages.isEmpty && context.device.deviceModel == nil)
        #expect(context.device.osVersion == "17.4.1" && context.device.appVersion == "2.3.0")
    }

    @Test("not allowed: a certain link (the pasteboard) is still delivered as the deferred link")
    func certainLinkStillWorks() async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        let pasteboard = InMemoryPasteboard()
        pasteboard.copy("https://go.acme.app/spring")
        let client = client(backend, Authorization(false), pasteboard: pasteboard)
        await client.start()
        #expect(await client.installOutcome().attribution?.method == .pasteboard)
        #expect(backend.installMatchCount == 0)
    }

    @Test("a backend that names the install in its report gets one, without signals and marked withheld")
    func reportWithoutSignals() async throws {
        let backend = InMemoryBackend(hosts: ["go.acme.app"], needsInstallReport: true)
        backend.scriptInstall(.success(.organic(.organic(installID: "inst-1"))))
        let client = client(backend, Authorization(false))
        await client.start()
        #expect(backend.installMatchCount == 1)
        let context = try #require(backend.contexts.first)
        #expect(context.fingerprintWithheld && context.device.screen == nil && context.device.vendorID == nil)
    }

    @Test("allowed: the match is asked for with the whole device; the answer is read at each request")
    func allowed() async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        let authorization = Authorization(true)
        let client = client(backend, authorization)
        await client.start()
        #expect(backend.installMatchCount == 1)
        #expect(backend.contexts.first?.fingerprintWithheld == false && backend.contexts.first?.device.screen != nil)
        authorization.authorized.withLock { $0 = false }
        _ = try await client.resolve(url("https://go.acme.app/sale"))
        #expect(backend.contexts.last?.fingerprintWithheld == true)
    }

    @Test("the default sends it, as before; withholding keeps the platform, versions and time zone")
    func defaults() {
        #expect(DeepLinkClient.Configuration().fingerprinting.allowsFingerprint)
        #expect(FingerprintPolicy.whenTrackingAuthorized.allowsFingerprint == false)  // no App Tracking Transparency here
        let withheld = Self.phone.withholdingFingerprint()
        #expect(withheld.osName == "iOS" && withheld.timeZoneIdentifier == "America/New_York" && withheld.regionCode == nil)
    }
}
