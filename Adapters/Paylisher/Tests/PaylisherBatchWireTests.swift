import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayTesting
import LinkRelayWire
import Testing

@testable import LinkRelayPaylisher

@Suite("Paylisher analytics batches")
struct PaylisherBatchTests {
    @Test(
        "track: POST {host}/batch, gzip, api_key, ms timestamps, an upper-case UUIDv7 stable across retries, a stable UUIDv7 distinct_id, the session's campaign"
    )
    func batch() async throws {
        var harness = try Harness()
        let store = InMemoryStore()
        harness.context.storage = BackendStorage(store: store)
        harness.context.sessionAttribution = Campaign(key: "X7kdi5Yq9", journeyID: "jrn_1", source: "instagram")
        harness.transport.stub(.post, "/batch", .status(200))
        let id = UUID()
        let event = ConversionEvent(
            id: id, name: "purchase", properties: ["sku": "A-1", "campaign_key": "from-event"],
            timestamp: Date(timeIntervalSince1970: 1_784_711_643.512), revenue: .init(amount: Decimal(string: "9.5")!, currency: "EUR"))
        try await harness.backend.send(event, context: harness.context)
        try await harness.backend.send(event, context: harness.context)
        let requests = harness.transport.requests
        #expect(requests[0].url.absoluteString == "https://us.i.paylisher.com/batch")
        #expect(requests[0].headers["Content-Encoding"] == "gzip")
        #expect(requests[0].headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(requests[0].headers["Authorization"] == nil)
        let bodies = try requests.map { try JSONDecoder().decode([String: JSONValue].self, from: Gzip.decompress(#require($0.body))) }
        let first = try #require(bodies.first)
        #expect(first["api_key"] == .string(apiKey))
        guard case .array(let batch)? = first["batch"], case .object(let sent)? = batch.first else {
            Issue.record("no batch")
            return
        }
        #expect(sent["event"] == "purchase")
        // A UUIDv7 in upper case (§7): the event's millisecond time first, version 7, the RFC
        // variant; the same for the same event, so a retry carries the same uuid.
        let uuid = try #require(sent["uuid"]?.stringValue)
        #expect(uuid == uuid.uppercased())
        #expect(uuid.hasPrefix("019F891A-8178-7"))
        #expect(UUIDv7Check.isVersion7(uuid, milliseconds: 1_784_711_643_512))
        guard case .array(let again)? = bodies.last?["batch"], case .object(let resent)? = again.first else {
            Issue.record("no second batch")
            return
        }
        #expect(resent["uuid"] == sent["uuid"])
        #expect(sent["uuid"] != .string(id.uuidString.uppercased()))
        #expect(sent["timestamp"] == "2026-07-22T09:14:03.512Z")
        guard case .object(let properties)? = sent["properties"] else {
            Issue.record("no properties")
            return
        }
        #expect(properties["sku"] == "A-1")
        #expect(properties["revenue"] == 9.5)
        #expect(properties["currency"] == "EUR")
        #expect(properties["campaign_key"] == "X7kdi5Yq9")  // the session's attribution wins
        #expect(properties["deeplink_key"] == "X7kdi5Yq9")
        #expect(properties["campaign_source"] == "instagram")
        #expect(properties["jid"] == "jrn_1")
        #expect(properties["$lib"] == "paylisher-ios")
        // The same anonymous distinct_id on every event of the install.
        let ids = bodies.compactMap { body -> JSONValue? in
            if case .array(let batch)? = body["batch"], case .object(let event)? = batch.first { return event["distinct_id"] }
            return nil
        }
        #expect(ids.count == 2 && ids[0] == ids[1])
        #expect(UUIDv7Check.isVersion7(try #require(ids.first?.stringValue), milliseconds: nil))
        #expect(store.keys == ["backend.distinctId"])
    }

    @Test(
        "the batch URL joins as Paylisher's SDK joins it",
        arguments: [
            ("https://us.i.paylisher.com", "https://us.i.paylisher.com/batch"), ("https://x.com/ingest", "https://x.com/batch"),
            ("https://x.com/ingest/", "https://x.com/ingest/batch"),
        ])
    func batchURL(_ host: String, _ expected: String) {
        #expect(PaylisherEndpoints.batch(host: url(host)).absoluteString == expected)
    }

    @Test(
        "5xx and 3xx are retryable, 413 is left to the client's batching (it halves the batch), another 4xx is not; no session attribution means none stamped"
    )
    func failures() async throws {
        for (status, retryable) in [(503, true), (302, true), (413, false), (400, false)] {
            let harness = try Harness()
            harness.transport.stub(.post, "/batch", .status(status))
            let error = await #expect(throws: DeepLinkError.self) {
                try await harness.backend.send(ConversionEvent(name: "x", timestamp: Date()), context: harness.context)
            }
            #expect(error?.isRetryable == retryable)
        }
        let event = PaylisherMapping.batchEvent(
            ConversionEvent(name: "x", timestamp: Date()), distinctID: "d", device: .unknown, session: nil)
        #expect(event.properties["campaign_key"] == nil)
        #expect(event.properties["jid"] == nil)
    }
}

/// Reads a UUID string as RFC 9562 lays out a version 7 UUID.
enum UUIDv7Check {
    /// Whether `text` is an upper-case UUIDv7, with `milliseconds` as its time when given.
    static func isVersion7(_ text: String, milliseconds: UInt64?) -> Bool {
        guard text == text.uppercased(), let uuid = UUID(uuidString: text) else { return false }
        let bytes = uuid.uuid
        let time = [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return bytes.6 >> 4 == 7 && bytes.8 >> 6 == 0b10 && (milliseconds.map { $0 == time } ?? true)
    }
}

@Suite("Paylisher event batch answers")
struct PaylisherBatchAnswerTests {
    let event = ConversionEvent(name: "purchase", timestamp: Date(timeIntervalSince1970: 1_800_000_000))

    @Test("a redirect the transport did not follow is a network error (the events are kept); a 400 is the server's")
    func redirectKeepsEvents() async throws {
        let harness = try Harness()
        let path = PaylisherEndpoints.batch(host: harness.backend.configuration.analyticsHost).path
        harness.transport.stub(.post, path, [.status(302), .status(400)])
        let redirect = try await #require(throws: DeepLinkError.self) { try await harness.backend.send([event], context: harness.context) }
        #expect(redirect.code == .network && redirect.status == 302)
        #expect(redirect.message.hasSuffix("(a redirect; the events are kept)"))
        let refused = try await #require(throws: DeepLinkError.self) { try await harness.backend.send([event], context: harness.context) }
        #expect(refused.code == .server(status: 400))
    }
}
