import Foundation
import Testing

/// SimulatingEachProvider.swift runs the article's examples; this keeps the two the same.
@Suite("Documentation examples run as they are written")
struct DocumentationExampleTests {
    @Test("Testing in Detail's \"Simulating each provider\" block is SimulatingEachProvider.swift, word for word")
    func simulatingEachProvider() throws {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = here.deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/LinkRelay/LinkRelay.docc/TestingInDetail.md"), encoding: .utf8)
        let section = try #require(article.range(of: "## Simulating each provider"))
        let rest = article[section.upperBound...]
        let open = try #require(rest.range(of: "```swift\n"))
        let close = try #require(rest[open.upperBound...].range(of: "```"))
        let block = String(rest[open.upperBound..<close.lowerBound])

        let source = try String(contentsOf: here.appendingPathComponent("SimulatingEachProvider.swift"), encoding: .utf8)
        let code = source.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0.hasPrefix("//") || $0.isEmpty }
            .joined(separator: "\n")
        #expect(code == block)
    }
}
