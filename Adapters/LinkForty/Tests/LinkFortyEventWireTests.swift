import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayTesting
import Testing

@testable import LinkRelayLinkForty

@Suite("LinkForty wire protocol: events (E4) and link creation (E5/E6)")
struct LinkFortyEventAndLinkTests {
    let timestamp = Date(timeIntervalSince1970: 1_772_438_700)  // 2026-03-02T08:05:00Z

    @Test("event (9.7): body with installId, eventName, eventData and a second-precision UTC timestamp")
    func event() async throws {
        let harness = try Harness(installID: "3f1c9a52-7d4e-4b8a-9e21-6c0d5b8f4a17")
        harness.transport.stub(
            .post, "/api/sdk/v1/event", .json(#"{"eventId":"9d4b2f61-3c8e-4a05-b7d2-e1f06a3c5b98","acknowledged":true}"#))
        try await harness.backend.send(ConversionEvent(name: "signup", timestamp: timestamp), context: harness.context)
        let body = try json(harness.transport.requests.first?.body)
        #expect(
            body == [
                "installId": "3f1c9a52-7d4e-4b8a-9e21-6c0d5b8f4a17", "eventName": "signup", "eventData": [:],
                "timestamp": "2026-03-02T08:05:00Z", "sdkName": "linkrelay", "sdkVersion": .string(LinkRelayVersion.string),
            ])
        #expect(harness.transport.requests.first?.headers["X-LinkForty-SDK"] == "linkrelay/\(LinkRelayVersion.string)")
    }

    @Test("revenue (9.7): eventName revenue, revenue and currency in eventData")
    func revenue() async throws {
        let harness = try Harness(installID: "3f1c9a52-7d4e-4b8a-9e21-6c0d5b8f4a17")
        harness.transport.stub(.post, "/api/sdk/v1/event", .status(200))
        let event = ConversionEvent(
            name: "revenue", properties: ["product_id": "123"], timestamp: timestamp,
            revenue: .init(amount: Decimal(string: "29.99")!, currency: "USD"))
        try await harness.backend.send(event, context: harness.context)
        let body = try json(harness.transport.requests.first?.body)
        #expect(body["eventName"] == "revenue")
        #expect(body["eventData"] == ["revenue": 29.99, "currency": "USD", "product_id": "123"])
    }

    @Test("unknown install: 404 is a failure that is not retried")
    func unknownInstall() async throws {
        let harness = try Harness(installID: "00000000-0000-4000-8000-000000000000")
        harness.transport.stub(.post, "/api/sdk/v1/event", .json(#"{"error":"Install event not found"}"#, status: 404))
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.send(ConversionEvent(name: "x", timestamp: timestamp), context: harness.context)
        }
        #expect(error?.code == .server(status: 404))
        #expect(error?.isRetryable == false)
    }

    @Test("without an install id the event waits: notStarted, no request")
    func noInstallID() async throws {
        let harness = try Harness(installID: nil)
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.send(ConversionEvent(name: "x", timestamp: timestamp), context: harness.context)
        }
        #expect(error?.code == .notStarted)
        #expect(harness.transport.requests.isEmpty)
    }

    @Test("link creation from a template (9.8, §7.4): POST /api/links with originalUrl and description, snake_case answer, slug in the URL")
    func createFromTemplate() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/links",
            .json(
                #"{"id":"e41b6a0c-77d2-4c1f-9a3e-0b5d8c2f6a91","short_code":"Ru8vN2kd","template_id":"5a1e7c3d-0b92-4f48-8e6a-c2d9f1a0b347","clickCount":0}"#
            ))
        let created = try await harness.backend.createLink(
            LinkRequest(
                fallbackURL: url("https://acme.example/videos/vid123"), parameters: ["route": "VIDEO_VIEWER", "id": "vid123"],
                utm: UTMParameters(source: "app", campaign: "share"), title: "Check this out",
                description: "A video from Ana", templateID: "5a1e7c3d-0b92-4f48-8e6a-c2d9f1a0b347", templateSlug: "k3m9x2qa",
                externalUserID: "user-7"),
            context: harness.context)
        #expect(
            created
                == CreatedLink(
                    url: url("https://go.acme.app/k3m9x2qa/Ru8vN2kd"), shortCode: "Ru8vN2kd", linkID: "e41b6a0c-77d2-4c1f-9a3e-0b5d8c2f6a91"
                ))
        let request = try #require(harness.transport.requests.first)
        #expect(request.headers["Authorization"] == "Bearer lf_live_8c1f0e9a2b")
        #expect(
            try json(request.body) == [
                "templateId": "5a1e7c3d-0b92-4f48-8e6a-c2d9f1a0b347", "templateSlug": "k3m9x2qa",
                "originalUrl": "https://acme.example/videos/vid123",
                "deepLinkParameters": ["route": "VIDEO_VIEWER", "id": "vid123"], "title": "Check this out",
                "description": "A video from Ana", "utmParameters": ["source": "app", "campaign": "share"], "externalUserId": "user-7",
            ])
    }

    @Test("link creation without a template (9.8): POST /api/sdk/v1/links, camelCase answer with deduplicated")
    func createWithoutTemplate() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/sdk/v1/links",
            .json(
                #"{"url":"https://go.acme.app/k3m9x2qa/Ru8vN2kd","shortCode":"Ru8vN2kd","linkId":"e41b6a0c-77d2-4c1f-9a3e-0b5d8c2f6a91","deduplicated":false}"#
            ))
        let created = try await harness.backend.createLink(
            LinkRequest(parameters: ["route": "VIDEO_VIEWER", "id": "vid123"], title: "Check this out"), context: harness.context)
        #expect(
            created
                == CreatedLink(
                    url: url("https://go.acme.app/k3m9x2qa/Ru8vN2kd"), shortCode: "Ru8vN2kd",
                    linkID: "e41b6a0c-77d2-4c1f-9a3e-0b5d8c2f6a91", deduplicated: false))
        #expect(
            try json(harness.transport.requests.first?.body) == [
                "deepLinkParameters": ["route": "VIDEO_VIEWER", "id": "vid123"], "title": "Check this out",
            ])
    }

    @Test("link creation needs an API key, checked before any request; a template needs the web URL")
    func createLinkPreconditions() async throws {
        let keyless = try Harness(apiKey: nil)
        let error = await #expect(throws: DeepLinkError.self) {
            try await keyless.backend.createLink(LinkRequest(title: "x"), context: keyless.context)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(keyless.transport.requests.isEmpty)
        let keyed = try Harness()
        let templateError = await #expect(throws: DeepLinkError.self) {
            try await keyed.backend.createLink(LinkRequest(templateID: "t"), context: keyed.context)
        }
        #expect(templateError?.code == .invalidArgument)
        #expect(keyed.transport.requests.isEmpty)
    }

    @Test("Core without the Cloud endpoint: 404 route-not-found is a server error")
    func coreWithoutCloudEndpoint() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/sdk/v1/links",
            .json(#"{"message":"Route POST:/api/sdk/v1/links not found","error":"Not Found","statusCode":404}"#, status: 404))
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.createLink(LinkRequest(title: "x"), context: harness.context)
        }
        #expect(error?.code == .server(status: 404))
    }
}
