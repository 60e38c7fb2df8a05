import Foundation
import LinkRelay
import LinkRelaySimulator
import Testing

@Suite("Simulator delays at their extremes", .timeLimit(.minutes(1)))
struct SimulatorDelayTests {
    @Test("a simulated fault's delay of any size parks the request until it is cancelled", arguments: [1e12, .infinity])
    func simulatorDelay(_ seconds: TimeInterval) async throws {
        let simulator = ProviderSimulator(clock: SystemClock())
        simulator.setFault(.delay(seconds), path: "/slow")
        let request = Task {
            try await simulator.send(HTTPRequest(method: .get, url: URL(string: "https://go.sandbox.test/slow")!))
        }
        request.cancel()
        await #expect(throws: (any Error).self) { try await request.value }
    }

}
