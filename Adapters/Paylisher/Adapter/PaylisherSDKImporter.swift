import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

/// Reads what Paylisher's iOS SDK left on the device (paylisher.md §11), for an app that replaces
/// that SDK with LinkRelay:
///
/// | Where | Key | What LinkRelay does with it |
/// |---|---|---|
/// | `UserDefaults` | `paylisher_first_launch_has_launched`, `paylisher_deferred_check_completed` | the app ran before |
/// | `UserDefaults` | `paylisher_first_launch_install_timestamp` | the install date (``/LinkRelay/PreviousSDK/installedAt``, the launch history's first-seen date) |
/// | `UserDefaults` | `PHGVersionKey`, `PHGBuildKeyV2` | the app's version at the SDK's last launch |
/// | `Application Support/<bundle id>/` | `paylisher.distinctId` (else `paylisher.anonymousId`) | the anonymous `distinct_id`: a Paylisher backend sends its events under it |
/// | `Application Support/<bundle id>/paylisher.queueFolder/` | one file per event | events the SDK had not sent: sent once by a Paylisher backend, with their `uuid`, name, time and properties |
///
/// The SDK's files hold JSON as its PostHog-derived storage writes it: a value is
/// `{"paylisher.distinctId": "…"}` (or a bare string), a queued event
/// `{"event", "distinct_id", "properties", "timestamp", "uuid"}`; its files are named by time
/// (seconds since 1970, or a UUIDv7), which gives their order. A file that is not such an event,
/// or is over 1 MiB, is counted as not importable. Nothing is changed or removed.
///
/// ``PaylisherBackend`` runs this importer by default; name it in
/// `DeepLinkClient.Configuration.previousSDKs` when the app moves from Paylisher's SDK to another
/// provider (its events then stay behind, counted in ``/LinkRelay/PreviousSDK/eventsNotImported``).
public struct PaylisherSDKImporter: PreviousSDKImporter {
    /// `true` once the SDK saw a launch.
    public static let launchedKey = "paylisher_first_launch_has_launched"
    /// The install time, seconds since 1970.
    public static let installTimestampKey = "paylisher_first_launch_install_timestamp"
    /// `true` once the deferred check was answered (or given up).
    public static let deferredCheckedKey = "paylisher_deferred_check_completed"
    /// The app's version and build at the SDK's last launch.
    public static let versionKey = "PHGVersionKey"
    /// The app's build at the SDK's last launch.
    public static let buildKey = "PHGBuildKeyV2"
    /// The file of the anonymous distinct id, in the app's Application Support folder.
    public static let distinctIDFile = "paylisher.distinctId"
    /// The file of the anonymous id, read when there is no distinct id.
    public static let anonymousIDFile = "paylisher.anonymousId"
    /// The folder of unsent events.
    public static let queueFolder = "paylisher.queueFolder"
    /// How many queued files are read at most; the rest count as not importable.
    public static let maximumQueuedFiles = 10_000

    /// An importer.
    public init() {}

    public var provider: BackendID { .paylisher }

    public func read(_ storage: PreviousSDKStorage) -> SDKImport? {
        let folder = storage.appFolder
        let distinctID =
            folder.flatMap { Self.storedString(storage, in: $0, file: Self.distinctIDFile) }
            ?? folder.flatMap { Self.storedString(storage, in: $0, file: Self.anonymousIDFile) }
        let queue = folder.map { $0.appendingPathComponent(Self.queueFolder, isDirectory: true) }
        let queuedFiles = queue.map { Self.ordered(storage.fileNames(in: $0)) } ?? []
        let ran =
            storage.hasValue(forKey: Self.launchedKey) || storage.hasValue(forKey: Self.installTimestampKey)
            || storage.hasValue(forKey: Self.deferredCheckedKey) || storage.hasValue(forKey: Self.versionKey)
        guard ran || distinctID != nil || !queuedFiles.isEmpty else { return nil }

        var events: [ConversionEvent] = []
        var unreadable = max(queuedFiles.count - Self.maximumQueuedFiles, 0)
        if let queue {
            for name in queuedFiles.prefix(Self.maximumQueuedFiles) {
                if let event = storage.contents(of: queue.appendingPathComponent(name)).flatMap(Self.event) {
                    events.append(event)
                } else {
                    unreadable += 1
                }
            }
        }
        let installedAt = storage.double(forKey: Self.installTimestampKey).flatMap { seconds in
            seconds.isFinite && seconds > 0 && seconds < 32_503_680_000 ? Date(timeIntervalSince1970: seconds) : nil
        }
        let version = storage.string(forKey: Self.versionKey)
        let build = storage.string(forKey: Self.buildKey)
        let sdk = PreviousSDK(
            provider: .paylisher, installID: distinctID, installedAt: installedAt,
            lastVersion: version == nil && build == nil ? nil : AppVersion(version: version, build: build))
        return SDKImport(
            sdk: sdk, backendValues: distinctID.map { [PaylisherBackend.distinctIDKey: $0] } ?? [:], queuedEvents: events,
            unreadableEvents: unreadable)
    }

    /// A string value as the SDK's storage writes it: `{"<file name>": "value"}` or `"value"`.
    private static func storedString(_ storage: PreviousSDKStorage, in folder: URL, file: String) -> String? {
        guard let data = storage.contents(of: folder.appendingPathComponent(file), limit: 64 << 10) else { return nil }
        let value: String?
        if let wrapped = try? JSONDecoder().decode([String: String].self, from: data) {
            value = wrapped[file]
        } else {
            value = try? JSONDecoder().decode(String.self, from: data)
        }
        guard let value, !value.isEmpty, value.count <= 200 else { return nil }
        return value
    }

    /// File names in the order the SDK sends them: by time (numbers), else by name (UUIDv7s
    /// sort by time).
    private static func ordered(_ names: [String]) -> [String] {
        let visible = names.filter { !$0.hasPrefix(".") }
        let times = visible.map(Double.init)
        if times.allSatisfy({ $0?.isFinite == true }) {
            return zip(visible, times).sorted { ($0.1 ?? 0, $0.0) < ($1.1 ?? 0, $1.0) }.map(\.0)
        }
        return visible.sorted()
    }

    private struct QueuedEvent: Decodable {
        var event: String
        var properties: [String: JSONValue]?
        var timestamp: String
        var uuid: String?
    }

    /// A queued event file as an event; `nil` when it is not one.
    static func event(_ data: Data) -> ConversionEvent? {
        guard let queued = try? JSONDecoder().decode(QueuedEvent.self, from: data), !queued.event.isEmpty,
            let timestamp = ISO8601Timestamp.parse(queued.timestamp)
        else { return nil }
        // The uuid is kept (the server deduplicates by it); the properties as the SDK stored them,
        // the device context replaced by this device's when it is sent.
        return ConversionEvent(
            id: queued.uuid.flatMap(UUID.init(uuidString:)) ?? UUID(), name: queued.event,
            properties: queued.properties ?? [:], timestamp: timestamp)
    }
}
