import Foundation
import Testing

/// The privacy manifests: valid property lists with Apple's keys, no tracking, and every
/// required-reason API the code uses declared (and none it does not use).
@Suite("Privacy manifests", .timeLimit(.minutes(1)))
struct PrivacyManifestTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The core, then every provider's adapter (each folder under Adapters/).
    static let modules: [String] = {
        let providers = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Adapters").path)) ?? []
        return ["Sources/LinkRelay"] + providers.sorted().map { "Adapters/\($0)/Adapter" }
    }()
    /// Modules an app links through an adapter that carry no manifest of their own: they must use
    /// no required-reason API (else they need one).
    static let withoutManifest = ["Sources/LinkRelayWire"]

    /// Required-reason APIs: a use in the code (a source text), the category it needs.
    static let requiredReasonAPIs: [(use: String, category: String)] = [
        ("systemUptime", "NSPrivacyAccessedAPICategorySystemBootTime"),
        ("UserDefaults", "NSPrivacyAccessedAPICategoryUserDefaults"),
        ("modificationDate", "NSPrivacyAccessedAPICategoryFileTimestamp"),
        ("creationDate", "NSPrivacyAccessedAPICategoryFileTimestamp"),
        // stat, fstat, lstat and fstatat are file timestamp APIs too, whatever field is read.
        ("stat(", "NSPrivacyAccessedAPICategoryFileTimestamp"),
        ("volumeAvailableCapacity", "NSPrivacyAccessedAPICategoryDiskSpace"),
        ("activeInputModes", "NSPrivacyAccessedAPICategoryActiveKeyboards"),
    ]

    private func manifest(_ module: String) throws -> [String: Any] {
        let data = try Data(contentsOf: Self.root.appendingPathComponent(module).appendingPathComponent("PrivacyInfo.xcprivacy"))
        return try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    private func sources(_ module: String) throws -> String {
        let folder = Self.root.appendingPathComponent(module)
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
        return try files.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
            .map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
    }

    @Test("no tracking, no tracking domains, and complete collected-data entries", arguments: modules)
    func shape(_ module: String) throws {
        let plist = try manifest(module)
        #expect(plist["NSPrivacyTracking"] as? Bool == false)
        #expect((plist["NSPrivacyTrackingDomains"] as? [String])?.isEmpty == true)
        let collected = try #require(plist["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        for entry in collected {
            #expect((entry["NSPrivacyCollectedDataType"] as? String)?.hasPrefix("NSPrivacyCollectedDataType") == true)
            #expect(entry["NSPrivacyCollectedDataTypeLinked"] is Bool)
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect((entry["NSPrivacyCollectedDataTypePurposes"] as? [String])?.isEmpty == false)
        }
    }

    @Test("the required-reason APIs declared are exactly those the module's code uses", arguments: modules)
    func requiredReasons(_ module: String) throws {
        let code = try sources(module)
        let used = Set(Self.requiredReasonAPIs.filter { code.contains($0.use) }.map(\.category))
        let accessed = try #require(try manifest(module)["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        let declared = Set(accessed.compactMap { $0["NSPrivacyAccessedAPIType"] as? String })
        #expect(declared == used)
        #expect(accessed.allSatisfy { ($0["NSPrivacyAccessedAPITypeReasons"] as? [String])?.isEmpty == false })
    }

    @Test(
        "a module that opens an App Group's UserDefaults suite declares 1C8F.1 beside CA92.1; one that does not, CA92.1 only",
        arguments: modules)
    func appGroupDefaults(_ module: String) throws {
        let code = try sources(module)
        guard code.contains("UserDefaults") else { return }
        let accessed = try #require(try manifest(module)["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        let reasons = try #require(
            accessed.first { $0["NSPrivacyAccessedAPIType"] as? String == "NSPrivacyAccessedAPICategoryUserDefaults" }?[
                "NSPrivacyAccessedAPITypeReasons"]
                as? [String])
        #expect(reasons.contains("CA92.1"))
        #expect(reasons.contains("1C8F.1") == code.contains("UserDefaults(suiteName"), "\(module)")
    }

    @Test("every provider's adapter is checked")
    func everyAdapter() {
        #expect(Self.modules.count == 5)
    }

    @Test("a module without a manifest of its own uses no required-reason API", arguments: withoutManifest)
    func noManifestNeeded(_ module: String) throws {
        let code = try sources(module)
        #expect(!code.isEmpty)
        #expect(Self.requiredReasonAPIs.filter { code.contains($0.use) }.map(\.use) == [])
        #expect(
            !FileManager.default.fileExists(
                atPath: Self.root.appendingPathComponent(module).appendingPathComponent("PrivacyInfo.xcprivacy").path))
    }

    @Test("what each adapter sends is declared: device ids where it sends one, events where it reports them")
    func collectedMatchesWhatIsSent() throws {
        func types(_ module: String) throws -> Set<String> {
            let entries = try #require(try manifest(module)["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
            return Set(entries.compactMap { $0["NSPrivacyCollectedDataType"] as? String })
        }
        for module in Self.modules.dropFirst() {
            let code = try sources(module)
            let sendsDeviceID = code.contains("advertisingID") || code.contains("vendorID")
            #expect(try types(module).contains("NSPrivacyCollectedDataTypeDeviceID") == sendsDeviceID, "\(module)")
            let reportsEvents = code.contains("EventTrackingBackend") || code.contains("LinkEventObservingBackend")
            #expect(try types(module).contains("NSPrivacyCollectedDataTypeProductInteraction") == reportsEvents, "\(module)")
        }
        #expect(try types("Sources/LinkRelay").isEmpty)  // the core sends nothing itself
    }
}
