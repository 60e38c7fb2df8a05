import Foundation
import LinkRelayTesting
import Testing

@_spi(Backend) @testable import LinkRelay

@Suite("FileStore")
struct FileStoreTests {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("linkrelay-tests-\(UUID().uuidString)", isDirectory: true)

    @Test("saves, reads, replaces and removes values as JSON files")
    func roundTrip() throws {
        let store = FileStore(directory: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try store.data(forKey: "install") == nil)
        try store.setData(Data("one".utf8), forKey: "install")
        try store.setData(Data("two".utf8), forKey: "install")
        try store.setData(Data("q".utf8), forKey: "events")
        #expect(try store.data(forKey: "install") == Data("two".utf8))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("install.json").path))
        try store.removeData(forKey: "install")
        try store.removeData(forKey: "install")
        #expect(try store.data(forKey: "install") == nil)
        try store.removeAll()
        #expect(try store.data(forKey: "events") == nil)
    }

    @Test("a write leaves only the key's file; other processes' leftover temporary files go at the first read")
    func temporaryFiles() throws {
        let store = FileStore(directory: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        try store.setData(Data("[1]".utf8), forKey: "events")
        try store.setData(Data("[1,2]".utf8), forKey: "events")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["events.json"])
        // What processes killed between writing and renaming leave behind, beside a write of
        // this process under way (and a key with ".json." in its name).
        let me = ProcessInfo.processInfo.processIdentifier
        let killed = directory.appendingPathComponent(".events.json.\(me &+ 1).A1B2.tmp")
        let otherKey = directory.appendingPathComponent(".install.json.\(me &+ 2).E5F6.tmp")
        let oddKey = directory.appendingPathComponent(".a.json.\(me).json.\(me &+ 3).0A0B.tmp")
        let mine = directory.appendingPathComponent(".events.json.\(me).C3D4.tmp")
        for file in [killed, otherKey, oddKey, mine] { try Data("[1,2,".utf8).write(to: file) }
        #expect(try store.data(forKey: "events") == Data("[1,2]".utf8))
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == ["events.json", mine.lastPathComponent])
        // Once per folder and process: later reads list nothing.
        try Data("[".utf8).write(to: killed)
        _ = try store.data(forKey: "install")
        #expect(FileManager.default.fileExists(atPath: killed.path))
    }

    @Test(
        "keys and backend ids cannot leave the folder",
        arguments: [
            ("../../etc/passwd", ".._.._etc_passwd"), ("a/b", "a_b"), ("..", "_.."), ("", "_"), ("ok-1.2_x", "ok-1.2_x"),
        ])
    func safeNames(_ name: String, _ expected: String) {
        #expect(FileStore.safeName(name) == expected)
    }

    @Test("the default folder is LinkRelay/<backend id> under the data folder")
    func defaultFolder() throws {
        let store = try FileStore.forBackend("linkforty")
        #expect(store.directory.path.hasSuffix("/LinkRelay/linkforty"))
        if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !xdg.isEmpty {
            #expect(store.directory.path.hasPrefix(xdg))
        }
    }

    @Test("a client on a corrupt file store starts as a first launch and keeps working")
    func corruptFilesIgnored() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: directory.appendingPathComponent("install.json"))
        try Data([0xFF, 0xFE]).write(to: directory.appendingPathComponent("events.json"))
        let backend = InMemoryBackend()
        backend.scriptInstall(.success(.organic(.organic(installID: "fresh"))))
        let logs = LogCollector()
        let client = makeClient(backend, store: FileStore(directory: directory)) { $0.logSink = logs.sink }
        #expect(await client.queuedEventCount == 0)
        await client.start()
        #expect(await client.installOutcome() == .organic(.organic(installID: "fresh")))
        #expect(backend.installMatchCount == 1)
        #expect(logs.lines.filter { $0.contains("is corrupt") }.count == 2)
        // The record was rewritten: a new client on the same folder restores it.
        let restarted = makeClient(backend, store: FileStore(directory: directory))
        await restarted.start()
        #expect(backend.installMatchCount == 1)
    }

    @Test(
        "a store file emptied, truncated or overwritten with garbage is ignored with a log line; the client starts cleanly",
        arguments: [
            Data(), Data(#"[{"id":"0E1C4C3A-1B6A-4E55-9D7E-3F1E2A5B6C7D","name":"sig"#.utf8),
            Data(#"{"outcome":{"organic":{"_0":{"isAtt"#.utf8),
            Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }), Data("null".utf8), Data("[1,2,3]".utf8),
        ])
    func damagedFilesIgnored(_ content: Data) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-damaged-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try content.write(to: folder.appendingPathComponent("install.json"))
        try content.write(to: folder.appendingPathComponent("events.json"))
        let backend = InMemoryBackend()
        backend.scriptInstall(.success(.organic(.organic(installID: "fresh"))))
        backend.scriptEventSending(.success(()))
        let logs = LogCollector()
        let client = makeClient(backend, store: FileStore(directory: folder)) { $0.logSink = logs.sink }
        #expect(await client.queuedEventCount == 0)
        await client.start()
        #expect(await client.installOutcome() == .organic(.organic(installID: "fresh")))
        try await client.track("after")
        await client.flushEvents()
        #expect(backend.sentEvents.map(\.name) == ["after"])
        #expect(logs.lines.contains { $0.contains("is corrupt") })
        await client.shutdown()
    }

    @Test("BackendStorage keeps a backend's values apart and clearData removes them")
    func backendStorage() async throws {
        let store = InMemoryStore()
        let storage = BackendStorage(store: store)
        storage.set("abc", forKey: "installId")
        #expect(storage.value(String.self, forKey: "installId") == "abc")
        #expect(store.keys == ["backend.installId"])
        storage.set(String?.none, forKey: "installId")
        #expect(storage.value(String.self, forKey: "installId") == nil)
        storage.set(42, forKey: "count")
        let client = makeClient(InMemoryBackend(), store: store)
        await client.clearData()
        #expect(store.keys.isEmpty)
    }
}

@Suite("Device information")
struct DeviceInfoTests {
    @Test("SystemDeviceInfo reports what this platform knows and invents nothing")
    func systemDeviceInfo() async {
        let info = await SystemDeviceInfo().deviceInfo()
        #if os(Linux)
            #expect(info.osName == "Linux")
            #expect(info.screen == nil)
            #expect(info.vendorID == nil)
        #elseif os(macOS)
            #expect(info.osName == "macOS")
            #expect(info.screen == nil)
            #expect(info.vendorID == nil)
        #endif
        #expect(info.osVersion.split(separator: ".").count == 3)
        #expect(info.timeZoneIdentifier == TimeZone.current.identifier)
        #expect(info.preferredLanguages == Locale.preferredLanguages)
        #expect(info.advertisingID == nil)
    }

    @Test("the advertising id is present only when the app supplies it")
    func advertisingID() async {
        let id = UUID()
        #expect(await SystemDeviceInfo(advertisingID: { id }).deviceInfo().advertisingID == id)
    }

    @Test("screens convert points to native pixels")
    func pixels() {
        let screen = DeviceInfo.Screen(width: 393, height: 852, scale: 3)
        #expect(screen.pixelWidth == 1179)
        #expect(screen.pixelHeight == 2556)
    }

    @Test("the client collects device information once")
    func collectedOnce() async throws {
        let counter = CountingDeviceInfo()
        let backend = InMemoryBackend()
        let client = makeClient(backend) { $0.deviceInfo = counter }
        for index in 0..<3 { _ = try await client.resolve(url("myapp://x/\(index)")) }
        #expect(counter.calls == 1)
        #expect(backend.contexts.allSatisfy { $0.device == StaticDeviceInfo.iPhone })
    }
}

private final class CountingDeviceInfo: DeviceInfoProvider {
    private let count = Locked(0)
    var calls: Int { count.withLock { $0 } }
    func deviceInfo() async -> DeviceInfo {
        count.withLock { $0 += 1 }
        return StaticDeviceInfo.iPhone
    }
}

@Suite("Configuration validation")
struct ValidationTests {
    @Test(
        "base URLs must be https, except on loopback",
        arguments: [
            ("https://go.acme.app", true), ("https://go.acme.app/api/v1/", true), ("http://localhost:8642", true),
            ("http://127.0.0.1:8642/x", true), ("http://[::1]:8642", true), ("http://go.acme.app", false),
            ("ftp://go.acme.app", false), ("https://", false), ("go.acme.app", false),
        ])
    func baseURLs(_ value: String, _ valid: Bool) throws {
        let url = try #require(URL(string: value))
        if valid {
            #expect(try ConfigurationValidation.baseURL(url, field: "baseURL", backend: "x") == url)
        } else {
            let error = #expect(throws: DeepLinkError.self) {
                try ConfigurationValidation.baseURL(url, field: "baseURL", backend: "x")
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.message.hasPrefix("baseURL") == true)
        }
    }

    @Test(
        "attribution windows must be 1...2160 hours",
        arguments: [(0, false), (1, true), (168, true), (2160, true), (2161, false), (-3, false)])
    func attributionWindows(_ hours: Int, _ valid: Bool) {
        if valid {
            #expect(throws: Never.self) {
                try ConfigurationValidation.attributionWindow(hours, field: "attributionWindowHours", backend: "x")
            }
        } else {
            let error = #expect(throws: DeepLinkError.self) {
                try ConfigurationValidation.attributionWindow(hours, field: "attributionWindowHours", backend: "x")
            }
            #expect(error?.message.contains("attributionWindowHours") == true)
        }
    }

    @Test("an optional API key must not be empty when given, a required one is required; neither is repeated in the error")
    func apiKeys() throws {
        #expect(try ConfigurationValidation.apiKey(nil, field: "apiKey", backend: "x") == nil)
        #expect(try ConfigurationValidation.apiKey(Optional("lf_live_1"), field: "apiKey", backend: "x") == "lf_live_1")
        let error = #expect(throws: DeepLinkError.self) {
            try ConfigurationValidation.apiKey(Optional("   "), field: "apiKey", backend: "x")
        }
        #expect(error?.message == "apiKey must not be empty when given.")
        let required = #expect(throws: DeepLinkError.self) { try ConfigurationValidation.apiKey("  ", field: "apiKey", backend: "x") }
        #expect(required?.message == "apiKey is required, and it is empty: give the key from the provider's dashboard.")
        #expect(try ConfigurationValidation.apiKey("k", field: "apiKey", backend: "x") == "k")
    }
}

@Suite("Identity and link creation", .timeLimit(.minutes(1)))
struct IdentityTests {
    @Test("the external user id is attached to link requests unless the request names its own")
    func externalUserID() async throws {
        let backend = InMemoryBackend()
        let client = makeClient(backend)
        await client.setExternalUserID("user-1")
        _ = try await client.createLink(LinkRequest(deepLinkPath: "/a"))
        _ = try await client.createLink(LinkRequest(deepLinkPath: "/b", externalUserID: "other"))
        await client.setExternalUserID(nil)
        let created = try await client.createLink(LinkRequest(deepLinkPath: "/c", customCode: "spring"))
        let requests = backend.calls.compactMap { if case .createLink(let request) = $0 { request } else { nil } }
        #expect(requests.map(\.externalUserID) == ["user-1", "other", nil])
        #expect(created.url == url("https://links.example.com/spring"))
        #expect(await client.externalUserID == nil)
    }

    @Test("link creation on a backend without it is unsupported")
    func createLinkUnsupported() async throws {
        let client = makeClient(LocalBackend(.init(schemes: ["myapp"])))
        let error = await #expect(throws: DeepLinkError.self) { try await client.createLink(LinkRequest()) }
        #expect(error?.code == .unsupported)
    }

    @Test("clearData forgets the external user id")
    func clearDataForgetsUser() async throws {
        let client = makeClient(InMemoryBackend())
        await client.setExternalUserID("user-1")
        await client.clearData()
        #expect(await client.externalUserID == nil)
    }
}

@Suite("UserDefaultsStore", .timeLimit(.minutes(1)))
struct UserDefaultsStoreTests {
    /// A suite of its own, removed afterwards.
    private func withSuite(_ body: (String) async throws -> Void) async throws {
        let suite = "org.linkrelay.tests.\(UUID().uuidString)"
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        try await body(suite)
    }

    @Test("values round-trip under the namespace; removeAll leaves the app's own keys")
    func roundTripAndNamespace() async throws {
        try await withSuite { suite in
            let store = try #require(UserDefaultsStore(suiteName: suite, namespace: "LR"))
            let defaults = try #require(UserDefaults(suiteName: suite))
            defaults.set("mine", forKey: "appSetting")
            try store.setData(Data("one".utf8), forKey: "install")
            try store.setData(Data("two".utf8), forKey: "events")
            #expect(try store.data(forKey: "install") == Data("one".utf8))
            #expect(defaults.data(forKey: "LR.install") == Data("one".utf8))
            try store.removeData(forKey: "install")
            #expect(try store.data(forKey: "install") == nil)
            try store.removeAll()
            #expect(try store.data(forKey: "events") == nil)
            #expect(defaults.string(forKey: "appSetting") == "mine")
        }
    }

    @Test("a client keeps its install outcome across a restart in UserDefaults")
    func restart() async throws {
        try await withSuite { suite in
            let backend = InMemoryBackend(schemes: ["acme"])
            backend.scriptInstall(.success(.organic(.organic(installID: "i-ud"))))
            let first = makeClient(backend, store: try #require(UserDefaultsStore(suiteName: suite)))
            await first.start()
            #expect(await first.installOutcome() == .organic(.organic(installID: "i-ud")))
            await first.shutdown()
            let second = makeClient(backend, store: try #require(UserDefaultsStore(suiteName: suite)))
            await second.start()
            #expect(await second.installOutcome() == .organic(.organic(installID: "i-ud")))
            #expect(backend.calls.filter { $0 == .matchInstall }.count == 1)
            await second.shutdown()
        }
    }
}

@Suite("Deferred queue writes", .timeLimit(.minutes(1)))
struct DeferredWriterTests {
    @Test("snapshots reach the store in order, the newest last, coalesced while a write is under way")
    func newestWinsInOrder() {
        let written = Locked([Int]())
        let writer = DeferredWriter { batch in
            guard let data = batch.whole else { return false }
            let value = data.withUnsafeBytes { Int($0.load(as: UInt16.self)) }
            written.withLock { $0.append(value) }
            return true
        }
        for value in 0..<2000 { writer.submit(withUnsafeBytes(of: UInt16(value)) { Data($0) }) }
        writer.flush()
        let values = written.withLock { $0 }
        #expect(values.last == 1999)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 })
        #expect(!writer.hasPending)
    }

    @Test("a client on a FileStore writes its queue off the caller's path, and shutdown leaves it on disk for the next launch")
    func fileStoreQueueSurvivesShutdown() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-deferred-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let backend = InMemoryBackend(schemes: ["myapp"])
        let first = makeClient(backend, store: FileStore(directory: folder))
        for index in 0..<50 { try await first.track("event-\(index)") }
        await first.shutdown()
        let second = makeClient(backend, store: FileStore(directory: folder))
        #expect(await second.queuedEventCount == 50)
        await second.shutdown()
    }
}
