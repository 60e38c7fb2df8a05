import Foundation
import Testing

@testable import LinkRelay

/// `DeepLink` keeps its fields in one copy-on-write box (a copy costs one retain on the way from
/// `handle` to `for await`): it must still behave as a plain value, and encode as it always did.
@Suite("DeepLink is a value")
struct DeepLinkValueTests {
    static let link = DeepLink(
        url: URL(string: "https://go.acme.app/p/42?color=red")!, origin: .deferred, provider: "linkforty",
        resolution: .local(.timedOut), destination: URL(string: "acme://products/42"), pathSegments: ["products", "42"],
        parameters: ["color": "red"], utm: UTMParameters(source: "mail", campaign: "spring"),
        campaign: Campaign(id: "c1", name: "Spring"), shortCode: "p42", linkID: "L1",
        clickedAt: Date(timeIntervalSince1970: 1_800_000_000), requiresAuthentication: true, metadata: ["k": .int(1)])

    /// Written by the build before the box (e460997), keys sorted: links stored by it still read,
    /// and a link encodes to the same bytes.
    static let storedByEarlierBuild =
        #"{"campaign":{"id":"c1","name":"Spring"},"clickedAt":821692800,"destination":"acme:\/\/products\/42","id":"dc62b9c719e241b4","linkID":"L1","metadata":{"k":1},"origin":"deferred","parameters":{"color":"red"},"path":"\/products\/42","pathSegments":["products","42"],"provider":"linkforty","requiresAuthentication":true,"resolution":{"local":{"_0":{"timedOut":{}}}},"shortCode":"p42","url":"https:\/\/go.acme.app\/p\/42?color=red","utm":{"campaign":"spring","source":"mail"}}"#

    @Test("changing a copy leaves the original as it was, field by field")
    func copiesAreIndependent() {
        let original = Self.link
        var copy = original
        copy.parameters["color"] = "blue"
        copy.metadata["k"] = .int(2)
        copy.setPathSegments(["cart"])
        copy.requiresAuthentication = false
        #expect(original.parameters == ["color": "red"])
        #expect(original.metadata == ["k": .int(1)])
        #expect(original.pathSegments == ["products", "42"] && original.path == "/products/42")
        #expect(original.requiresAuthentication)
        #expect(copy.parameters == ["color": "blue"] && copy.path == "/cart" && !copy.requiresAuthentication)
        #expect(copy != original)
        var again = copy
        again.parameters["color"] = "red"
        again.metadata["k"] = .int(1)
        again.setPathSegments(["products", "42"])
        again.requiresAuthentication = true
        #expect(again == original)
        #expect(again.hashValue == original.hashValue)
        #expect(Set([again, original]).count == 1)
    }

    @Test("a copy shares the original's box until one of them changes; the box itself never changes")
    func boxIsShared() {
        let original = Self.link
        var copy = original
        #expect(copy.storage === original.storage)
        let box = original.storage
        copy.parameters["color"] = "blue"
        #expect(copy.storage !== original.storage)
        #expect(original.storage === box && box.fields.parameters == ["color": "red"])
        #expect(copy.storage !== DeepLink.Storage.vacant)
    }

    @Test("a link encodes and decodes exactly as the build before the box did")
    func storedFormUnchanged() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(Self.link), as: UTF8.self) == Self.storedByEarlierBuild)
        let decoded = try JSONDecoder().decode(DeepLink.self, from: Data(Self.storedByEarlierBuild.utf8))
        #expect(decoded == Self.link)
    }

    @Test("dump and the debugger show the fields, not the box")
    func mirrorShowsFields() {
        let labels = Mirror(reflecting: Self.link).children.compactMap(\.label)
        #expect(labels.first == "id" && labels.contains("metadata") && labels.contains("adReengagement") && labels.count == 17)
    }
}
