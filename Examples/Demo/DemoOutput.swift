import Foundation
import LinkRelay

/// How the demo prints events.
enum DemoOutput {
    /// `--debug`: every client of the demo logs at debug level, so each provider call shows with
    /// its status and duration, and each decision with its reason.
    static let debugLogging = ProcessInfo.processInfo.arguments.contains("--debug")

    /// A client configuration whose log lines go to standard output, in line with the story
    /// that caused them: warnings, or everything with `--debug`.
    static func configuration() -> DeepLinkClient.Configuration {
        var configuration = DeepLinkClient.Configuration()
        // Through `print`, so the lines keep their place among the story's own.
        configuration.logSink = LogSink(minimumLevel: debugLogging ? .debug : .warning) { record in
            print("   [LinkRelay] \(record.level): \(record.message)")
        }
        return configuration
    }

    static func show(_ event: DeepLinkEvent?) {
        guard let event else {
            print("   (the stream ended)")
            return
        }
        switch event {
        case .link(let link):
            var line = "   → link \(link.path)  [\(link.origin), \(describe(link.resolution))]"
            if !link.parameters.isEmpty {
                line += "  params " + link.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            }
            if let destination = link.destination { line += "  destination \(destination.absoluteString)" }
            if let code = link.shortCode { line += "  short code \(code)" }
            print(line)
        case .authenticationRequired(let link):
            print("   → sign-in needed for \(link.path); the link is held")
        case .pendingLinkDropped(let link, let reason):
            print("   → held link \(link.path) dropped (\(reason))")
        case .install(let outcome):
            print("   → install: \(describe(outcome))")
        case .failure(let error):
            print("   → refused: \(error.code): \(error.message)")
        }
    }

    static func describe(_ resolution: DeepLink.Resolution) -> String {
        switch resolution {
        case .server: "resolved by the provider"
        case .local(let reason): "parsed on the device: \(reason)"
        }
    }

    static func step(_ title: String) {
        print("\n• \(title)")
    }

    /// The outcome in a line; the provider's install id only when it named one (LimeLink and
    /// Dynalinks name none, and an id kept from another SDK belongs to that SDK's provider).
    static func describe(_ outcome: InstallOutcome) -> String {
        func id(_ attribution: InstallAttribution?) -> String {
            attribution?.installID.map { ", install id \($0)" } ?? ""
        }
        switch outcome {
        case .attributed(let link, let attribution):
            let score = attribution.confidence.map { " (confidence \($0.score))" } ?? ""
            return "attributed to \(link.url.absoluteString)\(score)\(id(attribution))"
        case .attributedWithoutLink(let attribution):
            return "attributed without a link (link id \(attribution.linkID ?? "unknown"))\(id(attribution))"
        case .organic(let attribution):
            return "organic\(id(attribution))"
        case .failed(let error):
            return "failed: \(error.message)"
        case .timedOut:
            return "timed out"
        case .existingUser(let attribution):
            return "existing user, no install match asked for\(id(attribution))"
        }
    }

    static func describe(_ values: [String: JSONValue]) -> String {
        values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.scalarDescription ?? "…")" }.joined(separator: " ")
    }
}
