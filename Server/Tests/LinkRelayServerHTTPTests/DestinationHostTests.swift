import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayTesting
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// Where links made with the SDK key may send people: the project's to say.
@Suite("Destination hosts")
struct DestinationHostTests {
    @Test("patterns: exact hosts and *. subdomains; an empty list allows none, mode any every host")
    func patterns() {
        #expect(!DestinationHosts.allows([], "https://evil.example/x"))
        #expect(DestinationHosts(mode: .any, hosts: []).allows("https://evil.example/x"))
        #expect(!DestinationHosts(mode: .learned, hosts: []).allows("https://evil.example/x"))
        #expect(
            DestinationHosts.adding(["shop.acme.example", "acme.example", "b.example"], to: ["*.acme.example"]) == [
                "*.acme.example", "acme.example", "b.example",
            ])
        #expect(DestinationHosts.adding((0..<200).map { "h\($0).example" }, to: []).count == DestinationHosts.maxHosts)
        #expect(DestinationHosts.allows(["acme.example"], "https://ACME.example/p"))
        #expect(!DestinationHosts.allows(["acme.example"], "https://shop.acme.example/p"))
        #expect(DestinationHosts.allows(["*.acme.example"], "https://shop.acme.example/p"))
        #expect(!DestinationHosts.allows(["*.acme.example"], "https://acme.example/p"))
        #expect(!DestinationHosts.allows(["*.acme.example"], "https://evilacme.example/p"))
        #expect(!DestinationHosts.allows(["acme.example"], "https://acme.example.evil.example/p"))
        #expect(DestinationHosts.isValidPattern("*.acme.example") && !DestinationHosts.isValidPattern("acme..example"))
        #expect(!DestinationHosts.isValidPattern("https://acme.example") && !DestinationHosts.isValidPattern("*"))
    }

    @Test(
        "issue 63, 7: by default an SDK key's links go only to the hosts the project's admin links and templates use; any host is said explicitly",
        arguments: TestEngine.available)
    func learnedByDefault(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let other = world.otherProject.id
            #expect(try await world.store.destinationHosts(project: other) == DestinationHosts(mode: .learned, hosts: []))
            let admin = APIKeys.issue(project: other, scope: .admin, name: "CI", at: Date())
            try await world.store.insertKey(admin.record)
            func create(
                _ key: String, _ fields: [String: JSONValue], path: String = "/api/sdk/v1/links"
            ) async throws -> HTTPResponse.Status {
                try await world.app().test(.router) { client in
                    try await client.execute(
                        uri: path, method: .post, headers: HTTPTest.headers(key: key, json: true), body: HTTPTest.body(fields)
                    ) {
                        $0.status
                    }
                }
            }
            #expect(
                try await create(world.otherProjectKey, ["webFallbackUrl": "https://evil.example/phish"]) == .forbidden,
                "nothing learned yet")
            #expect(
                try await create(
                    admin.secret, ["originalUrl": "https://brand.example/a", "iosAppStoreUrl": "https://apps.apple.com/app/id1"],
                    path: "/api/links") == .created)
            #expect(try await world.store.destinationHosts(project: other).hosts == ["brand.example", "apps.apple.com"])
            #expect(try await create(world.otherProjectKey, ["webFallbackUrl": "https://brand.example/p/1"]) == .ok)
            for field in ["originalUrl", "webFallbackUrl", "iosAppStoreUrl", "androidAppStoreUrl", "iosUniversalLink", "androidAppLink"] {
                #expect(try await create(world.otherProjectKey, [field: "https://evil.example/phish"]) == .forbidden, "\(field)")
            }
            // An SDK key's links never teach a host; "any" is a choice an admin makes and can undo.
            #expect(try await world.store.destinationHosts(project: other).hosts == ["brand.example", "apps.apple.com"])
            try await world.app().test(.router) { client in
                try await client.execute(
                    uri: "/api/destination-hosts", method: .put, headers: HTTPTest.headers(key: admin.secret, json: true),
                    body: HTTPTest.body(["hosts": []])
                ) { response async throws in
                    let answer = try HTTPTest.object(response.body)
                    #expect(response.status == .badRequest && answer["error"]?.stringValue?.contains("\"mode\": \"any\"") == true)
                }
                try await client.execute(
                    uri: "/api/destination-hosts", method: .put, headers: HTTPTest.headers(key: admin.secret, json: true),
                    body: HTTPTest.body(["mode": "any"])
                ) { response async throws in
                    let answer = try HTTPTest.object(response.body)
                    #expect(response.status == .ok && answer["mode"] == "any")
                }
            }
            #expect(try await create(world.otherProjectKey, ["webFallbackUrl": "https://evil.example/phish"]) == .ok)
        }
    }

    @Test(
        "links stored before the modes existed teach their hosts once, at start; a project with a list keeps it",
        arguments: TestEngine.available)
    func learnedFromStoredLinks(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let other = world.otherProject.id
            try await world.store.insertLink(
                LinkRecord(projectID: other, shortCode: "old1", originalURL: "https://old.example/x", createdAt: Date()))
            try await world.store.insertLink(
                LinkRecord(
                    projectID: other, shortCode: "old2", originalURL: "https://old.example/y", webFallbackURL: "https://web.old.example/",
                    createdAt: Date()))
            // As migration 15 leaves a project made before it.
            _ = try await world.store.engine.withConnection {
                try await $0.run("UPDATE projects SET hosts_learned = 0 WHERE id = \(other)")
            }
            #expect(try await world.store.learnStoredDestinationHosts() == 1)
            #expect(try await world.store.destinationHosts(project: other).hosts == ["old.example", "web.old.example"])
            #expect(try await world.store.learnStoredDestinationHosts() == 0, "once")
        }
    }

    @Test(
        "once an admin sets the hosts, an SDK key's link to another host is a 403 naming the field; an admin's is not",
        arguments: TestEngine.available)
    func enforced(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                try await client.execute(
                    uri: "/api/destination-hosts", method: .put, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                    body: HTTPTest.body(["hosts": ["acme.example"]])
                ) { #expect($0.status == .forbidden, "an admin's setting") }
                try await client.execute(
                    uri: "/api/destination-hosts", method: .put, headers: HTTPTest.headers(key: world.adminKey, json: true),
                    body: HTTPTest.body(["hosts": ["Acme.example", "*.acme.example", "acme.example"]])
                ) { response async throws in
                    #expect(response.status == .ok)
                    #expect(try HTTPTest.object(response.body)["hosts"] == ["acme.example", "*.acme.example"])
                }
                for (field, url, key, status) in [
                    ("webFallbackUrl", "https://evil.example/phish", world.sdkKey, HTTPResponse.Status.forbidden),
                    ("originalUrl", "https://evil.example/phish", world.sdkKey, .forbidden),
                    ("webFallbackUrl", "https://shop.acme.example/p/1", world.sdkKey, .ok),
                    ("webFallbackUrl", "https://evil.example/campaign", world.adminKey, .ok),
                ] {
                    try await client.execute(
                        uri: "/api/sdk/v1/links", method: .post, headers: HTTPTest.headers(key: key, json: true),
                        body: HTTPTest.body([field: .string(url)])
                    ) { response async throws in
                        #expect(response.status == status, "\(field) \(url)")
                        if status == .forbidden { #expect(try HTTPTest.object(response.body)["field"] == .string(field)) }
                    }
                }
                try await client.execute(uri: "/api/destination-hosts", method: .get, headers: HTTPTest.headers(key: world.adminKey)) {
                    response async throws in
                    #expect(try HTTPTest.object(response.body)["hosts"] == ["acme.example", "*.acme.example"])
                }
            }
            #expect(try await world.store.destinationHosts(project: world.otherProject.id).hosts == [], "another project's are its own")
        }
    }
}
