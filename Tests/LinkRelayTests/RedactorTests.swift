import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// Redaction is linear in the text's length and log lines are bounded, so one hostile URL can
/// neither stall the caller of `handle` nor flood the log.
@Suite("Redaction at scale", .timeLimit(.minutes(1)))
struct RedactorTests {
    @Test(
        "named values are found in any case, around quotes and spaces, at the end of the text",
        arguments: [
            ("BEARER abc", "BEARER [redacted]"),
            (#"{"token" : "v1", "n": 2}"#, #"{"token" : "[redacted]", "n": 2}"#),
            ("x?password=p4ss", "x?password=[redacted]"),
            ("a=1&Client_Secret=s;b=2", "a=1&Client_Secret=[redacted];b=2"),
            ("token=", "token=[redacted]"),
            ("token", "token"),
            ("é token=v", "é token=[redacted]"),
            ("étoken=v", "étoken=[redacted]"),
            ("x_token=v 1token=v", "x_token=v 1token=v"),
            ("token=🔑🔑 next", "token=[redacted] next"),
            ("secret=a&secret=b", "secret=[redacted]&secret=[redacted]"),
        ])
    func namedValues(_ input: String, _ expected: String) {
        #expect(Redactor(secrets: []).redact(input) == expected)
    }

    @Test("a 64 KB URL full of token= is redacted, every value, in one pass")
    func longURL() {
        let pairs = (0..<4_000).map { "token=v\($0)" }.joined(separator: "&")
        let text = "https://go.acme.app/x?" + pairs + "&" + String(repeating: "a", count: 64_000 - pairs.utf8.count)
        let redacted = Redactor(secrets: ["sk_live_ABCD1234"]).redact(text)
        #expect(!redacted.contains("token=v"))
        #expect(redacted.components(separatedBy: "token=[redacted]").count - 1 == 4_000)
    }

    @Test("a line of 1 MB with no secret name comes back unchanged")
    func megabyteWithoutSecrets() {
        let text = String(repeating: "abcdefgh/?&=", count: 87_382)
        #expect(Redactor(secrets: ["sk_live_ABCD1234"]).redact(text) == text)
    }

    @Test("log lines are cut at 4 KB after redaction, with their length noted; a secret at the cut never shows")
    func linesAreCapped() throws {
        let logs = LogCollector()
        let secret = "sk_live_ABCD1234"
        let logger = LinkRelayLogger(sink: logs.sink, secrets: [secret])
        let prefix = String(repeating: "x", count: LinkRelayLogger.maximumMessageBytes - 8)
        logger.warning(prefix + secret + String(repeating: "y", count: 10_000))
        let line = try #require(logs.lines.first)
        #expect(!line.contains("sk_live"))
        let total = prefix.utf8.count + "[redacted]".utf8.count + 10_000
        #expect(line.hasSuffix("… (\(total) bytes in all)"))
        #expect(line.utf8.count < LinkRelayLogger.maximumMessageBytes + 40)
        logger.warning("short")
        #expect(logs.lines.last == "short")
    }

    @Test("a line cut inside a multi-byte character is cut before it")
    func cutOnCharacterBoundary() {
        let logs = LogCollector()
        let logger = LinkRelayLogger(sink: logs.sink, secrets: [])
        logger.warning("a" + String(repeating: "é", count: 5_000))
        let line = logs.lines.first ?? ""
        #expect(line == "a" + String(repeating: "é", count: 2_047) + "… (10001 bytes in all)")
    }

    @Test("handle() of a 64 KB URL with token= and debug logging returns, and the link is delivered")
    func handleLongURL() async throws {
        let logs = LogCollector()
        let backend = InMemoryBackend()
        let client = makeClient(backend) { $0.logSink = logs.sink }
        let links = client.deepLinks()
        let query = (0..<4_000).map { "token=v\($0)" }.joined(separator: "&")
        let long = url("myapp://products/1?" + query)
        #expect(client.handle(long))
        let unclaimed = url("other://x?" + query)
        #expect(!client.handle(unclaimed))
        #expect(await links.prefixArray(1).first?.path == "/products/1")
        #expect(logs.lines.allSatisfy { !$0.contains("token=v") })
    }
}
