import Foundation
import LinkRelay
import LinkRelayTesting
import LinkRelayWire
import Testing

/// The one request pipeline every adapter sends through: what it accepts, and the typed error
/// for everything else.
@Suite("ProviderAPI: send, status, decode")
struct ProviderAPITests {
    struct Payload: Codable, Equatable { var name: String }

    /// A body JSON cannot hold.
    struct Unencodable: Encodable {
        func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(Double.nan, .init(codingPath: [], debugDescription: "not a number"))
        }
    }

    let transport = StubTransport()
    let api = ProviderAPI(backend: "acme", name: "Acme")
    var context: BackendContext { BackendContext(transport: transport, device: StaticDeviceInfo.iPhone) }
    let request = HTTPRequest(method: .get, url: URL(string: "https://api.acme.test/v1/link")!)

    @Test("a 2xx body decodes into the payload")
    func success() async throws {
        transport.stub(.get, "/v1/link", .json(#"{"name":"spring"}"#, status: 201))
        #expect(try await api.fetch(Payload.self, request, "the lookup", context: context) == Payload(name: "spring"))
    }

    @Test("a status outside the accepted ones is the provider's error, with the status and the body's message")
    func failureStatus() async throws {
        transport.stub(.get, "/v1/link", .json(#"{"error":"quota exceeded"}"#, status: 503, headers: ["Retry-After": "7"]))
        let error = try await #require(throws: DeepLinkError.self) {
            _ = try await api.fetch(Payload.self, request, "the lookup", context: context)
        }
        #expect(error.status == 503)
        #expect(error.backend == "acme")
        #expect(error.message == "Acme answered 503 to the lookup. quota exceeded")
        #expect(error.retryAfter == 7)
    }

    @Test("a call may accept other statuses, and name its own error for the rest")
    func acceptedAndOtherwise() async throws {
        transport.stub(.get, "/v1/link", .json(#"{"name":"gone"}"#, status: 404))
        let response = try await api.send(request, "the lookup", accepting: ProviderAPI.anyStatus, context: context)
        #expect(response.status == 404)
        let error = try await #require(throws: DeepLinkError.self) {
            _ = try await api.send(
                request, "the lookup", accepting: 200...200,
                otherwise: { response, what, _, _ in DeepLinkError(.notFound, "no \(what) (\(response.status))", backend: "acme") },
                context: context)
        }
        #expect(error.code == .notFound && error.message == "no the lookup (404)")
    }

    @Test("a 2xx body that does not decode is .decoding, naming the call and the status")
    func undecodable() async throws {
        transport.stub(.get, "/v1/link", .json(#"{"title":"no name"}"#))
        let error = try await #require(throws: DeepLinkError.self) {
            _ = try await api.fetch(Payload.self, request, "the lookup", url: URL(string: "https://go.acme.test/x"), context: context)
        }
        #expect(error.code == .decoding)
        #expect(error.status == 200)
        #expect(error.message == "Acme's answer to the lookup could not be read.")
        #expect(error.url == URL(string: "https://go.acme.test/x"))
    }

    @Test("a body that cannot be encoded is .invalidArgument, and nothing is sent")
    func unencodable() throws {
        let error = try #require(throws: DeepLinkError.self) { _ = try api.encode(Unencodable()) }
        #expect(error.code == .invalidArgument)
        #expect(transport.requests.isEmpty)
    }
}
