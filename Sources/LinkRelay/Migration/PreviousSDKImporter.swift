import Foundation

/// Reads what a provider's own SDK left on the device, so that an app replacing it with
/// LinkRelay keeps its users: the install is not taken for a new one, the identity analytics
/// runs under goes on, a deferred link is not delivered twice, and unsent events are sent once.
///
/// Each adapter ships the importer of its provider's SDK (`LinkFortySDKImporter`, …), and its
/// backend runs it by default. When the app also changes provider, name the previous one too:
///
/// ```swift
/// configuration.previousSDKs = [LinkFortySDKImporter()]   // the app used LinkForty's SDK before
/// ```
///
/// The client runs each importer once per device, on its first ``DeepLinkClient/launch()``,
/// off the main thread; an importer only reads, never changes or removes the vendor's data.
public protocol PreviousSDKImporter: Sendable {
    /// The provider whose SDK this importer reads.
    var provider: BackendID { get }

    /// What the SDK left in `storage`, or `nil` when it never ran on this device (nothing of
    /// it is there). It must only read, and must not throw or crash on damaged data: a value
    /// that cannot be read is left out.
    func read(_ storage: PreviousSDKStorage) -> SDKImport?
}

/// What an importer found of a provider's SDK.
public struct SDKImport: Sendable, Hashable {
    /// What the app and the launch history are told (``AppLaunch/Kind/existingUser(previousSDK:)``).
    /// The client fills in ``PreviousSDK/importedEvents`` and ``PreviousSDK/eventsNotImported``.
    public var sdk: PreviousSDK
    /// Values for the provider's own backend, written to its `BackendStorage` (unless it
    /// holds a value of its own under that key) when the client's backend is of
    /// ``PreviousSDKImporter/provider``: Paylisher's `distinctId`, for instance.
    public var backendValues: [String: String]
    /// Events the SDK had queued and not sent, oldest first, each with its own id and
    /// timestamp. A backend of the same provider sends them once, through the client's queue.
    public var queuedEvents: [ConversionEvent]
    /// Events that were queued but could not be read.
    public var unreadableEvents: Int

    /// What was found.
    public init(
        sdk: PreviousSDK, backendValues: [String: String] = [:], queuedEvents: [ConversionEvent] = [],
        unreadableEvents: Int = 0
    ) {
        self.sdk = sdk
        self.backendValues = backendValues
        self.queuedEvents = queuedEvents
        self.unreadableEvents = unreadableEvents
    }
}

/// Where vendors' SDKs kept their data: the app's `UserDefaults` and its Application Support
/// folder. The defaults are the app's own; tests point it at a defaults suite and a folder of
/// their own.
///
/// Reading the app's own `UserDefaults` is declared in LinkRelay's privacy manifest (reason
/// CA92.1); nothing here reads file timestamps.
public struct PreviousSDKStorage: Sendable {
    /// The `UserDefaults` suite, or `nil` for `UserDefaults.standard`, where the vendors' SDKs
    /// write.
    public var defaultsSuiteName: String?
    /// The Application Support folder, or `nil` for the platform's.
    public var applicationSupport: URL?
    /// The app's bundle identifier (some SDKs keep files in a folder named by it), or `nil` for
    /// `Bundle.main`'s.
    public var bundleIdentifier: String?

    /// The app's own defaults and folders.
    public static let standard = PreviousSDKStorage()

    /// Storage in the given places; `nil` means the app's own.
    public init(defaultsSuiteName: String? = nil, applicationSupport: URL? = nil, bundleIdentifier: String? = nil) {
        self.defaultsSuiteName = defaultsSuiteName
        self.applicationSupport = applicationSupport
        self.bundleIdentifier = bundleIdentifier
    }

    // `UserDefaults` is not `Sendable` everywhere: the suite is opened on each use.
    private var defaults: UserDefaults {
        defaultsSuiteName.flatMap { UserDefaults(suiteName: $0) } ?? .standard
    }

    /// Whether the defaults hold any value under `key`.
    @_spi(Backend) public func hasValue(forKey key: String) -> Bool {
        defaults.object(forKey: key) != nil
    }

    /// The string under `key`; `nil` when there is none or it is not a string.
    @_spi(Backend) public func string(forKey key: String) -> String? {
        defaults.object(forKey: key) as? String
    }

    /// The Boolean under `key`; `nil` when there is none or it is not a Boolean (or a number).
    @_spi(Backend) public func bool(forKey key: String) -> Bool? {
        switch defaults.object(forKey: key) {
        case let value as Bool: value
        case let value as NSNumber: value.boolValue
        default: nil
        }
    }

    /// The number under `key`; `nil` when there is none or it is not a number.
    @_spi(Backend) public func double(forKey key: String) -> Double? {
        (defaults.object(forKey: key) as? NSNumber)?.doubleValue
    }

    /// The data under `key`; `nil` when there is none or it is not data.
    @_spi(Backend) public func data(forKey key: String) -> Data? {
        defaults.object(forKey: key) as? Data
    }

    /// The app's folder in Application Support (`Application Support/<bundle id>/`), or `nil`
    /// when the folder or the bundle identifier is unknown.
    @_spi(Backend) public var appFolder: URL? {
        guard let identifier = bundleIdentifier ?? Bundle.main.bundleIdentifier, !identifier.isEmpty else { return nil }
        let base =
            applicationSupport
            ?? (try? FileManager.default.url(for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: false))
        return base?.appendingPathComponent(identifier, isDirectory: true)
    }

    /// The contents of a file of at most `limit` bytes (1 MiB by default); `nil` when it is
    /// missing, unreadable or larger.
    @_spi(Backend) public func contents(of file: URL, limit: Int = 1 << 20) -> Data? {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: max(limit, 0) + 1), data.count <= limit else { return nil }
        return data
    }

    /// The names of the files in `folder`, sorted; empty when it is missing.
    @_spi(Backend) public func fileNames(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }
}
