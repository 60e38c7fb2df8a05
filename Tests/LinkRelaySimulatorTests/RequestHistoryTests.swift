import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import Testing

@testable import LinkRelaySimulatorCore

/// The simulator keeps the most recent requests only, so a sandbox under load stays within a
/// bounded amount of memory, and the admin API reads them a page at a time.
@Suite("Request history", .timeLimit(.minutes(1)))
struct RequestHistoryTests {
    func send(_ simulator: ProviderSimulator, _ count: Int) async {
        for n in 1...count {
            _ = try? await simulator.send(HTTPRequest(method: .get, url: URL(string: "https://nowhere.test/r/\(n)")!))
        }
    }

    func paths(_ requests: [HTTPRequest]) -> [String] { requests.map(\.url.path) }

    @Test("only the last requests are kept; pages are read by sequence number")
    func pages() async {
        let simulator = ProviderSimulator(clock: ManualClock(), requestHistoryLimit: 3)
        await send(simulator, 10)
        #expect(paths(simulator.requests) == ["/r/8", "/r/9", "/r/10"])
        #expect(simulator.receivedRequestCount == 10)
        let all = simulator.requests(after: 0, limit: 10)
        #expect(paths(all.requests) == ["/r/8", "/r/9", "/r/10"])
        #expect(all.dropped == 7 && all.nextAfter == 10 && all.received == 10)
        let one = simulator.requests(after: 7, limit: 1)
        #expect(paths(one.requests) == ["/r/8"] && one.nextAfter == 8 && one.dropped == 0)
        let rest = simulator.requests(after: one.nextAfter, limit: 5)
        #expect(paths(rest.requests) == ["/r/9", "/r/10"] && rest.nextAfter == 10)
        let none = simulator.requests(after: 10, limit: 5)
        #expect(none.requests.isEmpty && none.nextAfter == 10)
        #expect(simulator.requests(after: 0, limit: 0).requests.isEmpty)
    }

    @Test("100,000 requests with a history of 1,000 keep at most 2,000 in memory")
    func bounded() async {
        let simulator = ProviderSimulator(clock: ManualClock(), requestHistoryLimit: 1_000)
        await send(simulator, 100_000)
        #expect(simulator.requests.count == 1_000)
        #expect(simulator.storedRequestCount <= 2_000)
        #expect(simulator.requests.last?.url.path == "/r/100000")
        let none = ProviderSimulator(clock: ManualClock(), requestHistoryLimit: -5)
        await send(none, 3)
        #expect(none.requests.isEmpty && none.receivedRequestCount == 3)
    }

    @Test("GET /_admin/requests pages with after and limit, says where the next page starts, and refuses bad numbers")
    func adminPages() async throws {
        let sandbox = Sandbox(clock: ManualClock(), requestHistoryLimit: 4)
        for n in 1...6 {
            _ = await sandbox.handle(
                HTTPRequest(method: .get, url: URL(string: "http://127.0.0.1:8642/linkforty/x/\(n)")!, headers: ["Host": "127.0.0.1:8642"]))
        }
        func get(_ target: String) async throws -> HTTPResponse {
            let exchange = await sandbox.handle(
                HTTPRequest(method: .get, url: URL(string: "http://127.0.0.1:8642\(target)")!, headers: ["Host": "127.0.0.1:8642"]))
            guard case .respond(let response) = exchange.outcome else { throw DeepLinkError(.network, "closed") }
            return response
        }
        let first = try await get("/_admin/requests?after=0&limit=2")
        #expect(first.status == 200)
        #expect(try JSONDecoder().decode([HTTPRequest].self, from: first.body).map(\.url.path) == ["/x/3", "/x/4"])
        #expect(first.headers["X-Sandbox-Next-After"] == "4")
        #expect(first.headers["X-Sandbox-Dropped"] == "2")
        #expect(first.headers["X-Sandbox-Received"] == "6")
        let next = try await get("/_admin/requests?after=4")
        #expect(try JSONDecoder().decode([HTTPRequest].self, from: next.body).map(\.url.path) == ["/x/5", "/x/6"])
        #expect(try await get("/_admin/requests?after=-1").status == 400)
        #expect(try await get("/_admin/requests?limit=lots").status == 400)
    }
}
