import Foundation
import FuzzSupport
import Testing

/// Every committed corpus file and every crash found so far, through its target in a plain
/// build: the properties hold without libFuzzer too, and a fixed crash stays fixed.
@Suite("Fuzz corpus replay", .timeLimit(.minutes(2)))
struct CorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func files(_ folder: String, _ target: FuzzTarget) -> [URL] {
        let directory = root.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
    }

    @Test("the seed corpus holds inputs for every target, and each runs cleanly", arguments: FuzzTarget.allCases)
    func corpus(_ target: FuzzTarget) async throws {
        let files = Self.files("Corpus", target)
        #expect(files.count >= 5, "the \(target.rawValue) corpus is missing or thin")
        for file in files { await target.run(try Data(contentsOf: file)) }
    }

    @Test("every crash the fuzzer found runs cleanly now", arguments: FuzzTarget.allCases)
    func crashes(_ target: FuzzTarget) async throws {
        for file in Self.files("Crashes", target) { await target.run(try Data(contentsOf: file)) }
    }
}
