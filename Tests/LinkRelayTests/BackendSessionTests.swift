import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// What the client hands backends, on its own: opened once, kept across a clear, and one
/// context made from it.
@Suite("The backend session (BackendSession)")
struct BackendSessionTests {
    func session(logLevel: LogSink.Level = .info, _ configure: (inout DeepLinkClient.Configuration) -> Void = { _ in }) -> BackendSession {
        var configuration = DeepLinkClient.Configuration()
        configuration.store = InMemoryStore()
        configuration.transport = StubTransport()
        configure(&configuration)
        let logger = LinkRelayLogger(sink: LogSink(minimumLevel: logLevel) { _ in }, backend: "acme")
        return BackendSession(configuration: configuration.clamped(), backendID: "acme", logger: logger)
    }

    @Test("the configured store and transport are used as they are; the launch history shares the store unless it has its own")
    func configured() {
        let store = InMemoryStore()
        let history = InMemoryStore()
        var session = session { $0.store = store }
        #expect(session.store() as? InMemoryStore === store)
        #expect(session.launchHistoryStore() as? InMemoryStore === store)
        #expect(session.transport() is StubTransport)
        var separate = self.session {
            $0.store = store
            $0.launchHistoryStore = history
        }
        #expect(separate.launchHistoryStore() as? InMemoryStore === history)
    }

    @Test("at debug level the transport is wrapped to log each call; below it, not")
    func debugTransport() {
        var quiet = session(logLevel: .info)
        var debug = session(logLevel: .debug)
        #expect(!(quiet.transport() is LoggingTransport))
        #expect(debug.transport() is LoggingTransport)
    }

    @Test("the first device kept wins; a clear forgets the user and the campaign, not the device")
    func deviceAndReset() {
        var session = session()
        let first = DeviceInfo(osName: "iOS", osVersion: "17.4", timeZoneIdentifier: "Europe/Berlin", preferredLanguages: ["de-DE"])
        let second = DeviceInfo(osName: "iOS", osVersion: "18.0", timeZoneIdentifier: "UTC", preferredLanguages: [])
        #expect(session.keep(device: first) == first)
        #expect(session.keep(device: second) == first)
        session.externalUserID = "user-1"
        session.sessionAttribution = Campaign(key: "SUMMER")
        session.credentialsRejectionReported = true
        session.reset()
        #expect(session.externalUserID == nil && session.sessionAttribution == nil)
        #expect(session.device == first && session.credentialsRejectionReported)
    }

    @Test("a context carries the session's values")
    func context() async {
        var session = session()
        session.externalUserID = "user-1"
        let device = session.keep(device: DeviceInfo(osName: "iOS", osVersion: "17.4", timeZoneIdentifier: "UTC", preferredLanguages: []))
        let context = session.context(device: device, installID: "install-1") { _ in }
        #expect(context.externalUserID == "user-1" && context.installID == "install-1" && context.device == device)
    }
}
