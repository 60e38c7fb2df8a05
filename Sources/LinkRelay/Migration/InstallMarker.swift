import Foundation

#if canImport(Security)
    import Security
#endif

/// A mark that an earlier install of the app ran on this device, kept somewhere that survives
/// deleting the app, so that a reinstall can be told from a first install
/// (``AppLaunch/Kind/reinstall``).
///
/// On Apple platforms the default is ``KeychainInstallMarker``: Keychain items have so far
/// outlived the app on iOS, though Apple calls that an implementation detail, not a promise
/// (DeviceCheck's two bits per device are the one store Apple documents as surviving a
/// reinstall, and they need a server). Elsewhere there is none, and a reinstall looks like a
/// first install.
public protocol InstallMarker: Sendable {
    /// Whether an install of this app left the mark (this one or an earlier one).
    func isPresent() -> Bool
    /// Whether the mark is there, is not, or cannot be read now (the device is locked). The
    /// client asks this; the default answers from ``isPresent()``, present or absent.
    func state() -> InstallMarkerState
    /// Leaves the mark. Called on every launch whose mark was missing; failures are ignored.
    func place()
}

extension InstallMarker {
    public func state() -> InstallMarkerState { isPresent() ? .present : .absent }
}

/// What reading an ``InstallMarker`` found.
public enum InstallMarkerState: Sendable, Hashable {
    /// An install of this app left the mark.
    case present
    /// There is no mark: the store said so (for the Keychain, `errSecItemNotFound` alone).
    case absent
    /// The mark could not be read: the device is locked (`errSecInteractionNotAllowed`,
    /// -25308, before the first unlock after a restart), or the store failed. Never taken for
    /// absent while protected data is unavailable: the client waits for it.
    case unreadable
}

/// The install marker in the Keychain: a generic-password item (value `"1"`, readable after the
/// first unlock, never synced or migrated to another device). Keychain items have so far
/// outlived the app on iOS (an implementation detail, Apple says, not a promise), so after a
/// reinstall the item is still there while the app's files are gone. Between a restart and the
/// first unlock the Keychain answers `errSecInteractionNotAllowed`: the marker is then
/// ``InstallMarkerState/unreadable``, never absent.
///
/// It also recognises the marker Paylisher's SDK leaves (service
/// `com.paylisher.sdk.install-marker`, account `device`), so that an app that had that SDK
/// recognises its earlier installs too. The Keychain is not a required-reason API.
public struct KeychainInstallMarker: InstallMarker {
    /// The Keychain service of LinkRelay's own item.
    public var service: String
    /// The Keychain account of LinkRelay's own item.
    public var account: String
    /// Other items that also mark an earlier install (service, account).
    public var recognised: [(service: String, account: String)]

    /// The platform's marker: a ``KeychainInstallMarker`` on Apple platforms, `nil` elsewhere.
    public static let platformDefault: (any InstallMarker)? = {
        #if canImport(Security)
            return KeychainInstallMarker()
        #else
            return nil
        #endif
    }()

    /// LinkRelay's marker, recognising Paylisher's.
    public init(
        service: String = "dev.linkrelay.install-marker", account: String = "device",
        recognised: [(service: String, account: String)] = [("com.paylisher.sdk.install-marker", "device")]
    ) {
        self.service = service
        self.account = account
        self.recognised = recognised
    }

    public func isPresent() -> Bool { state() == .present }

    /// Present when any of the items is there; unreadable when none is and one could not be
    /// read; absent only when the Keychain said `errSecItemNotFound` for each.
    public func state() -> InstallMarkerState {
        var unreadable = false
        for item in [(service, account)] + recognised {
            switch Self.state(forStatus: Self.status(service: item.service, account: item.account)) {
            case .present: return .present
            case .unreadable: unreadable = true
            case .absent: continue
            }
        }
        return unreadable ? .unreadable : .absent
    }

    /// `errSecSuccess`.
    static let statusSuccess: Int32 = 0
    /// `errSecItemNotFound`: the only status that means there is no item.
    static let statusItemNotFound: Int32 = -25300
    /// `errSecInteractionNotAllowed`: the device is locked.
    static let statusInteractionNotAllowed: Int32 = -25308

    /// What a Keychain status says of the item: found, not found, or anything else (locked,
    /// a Keychain failure), which is unreadable.
    static func state(forStatus status: Int32) -> InstallMarkerState {
        switch status {
        case statusSuccess: .present
        case statusItemNotFound: .absent
        default: .unreadable
        }
    }

    public func place() {
        #if canImport(Security)
            let attributes: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                kSecValueData as String: Data("1".utf8),
            ]
            _ = SecItemAdd(attributes as CFDictionary, nil)
        #endif
    }

    private static func status(service: String, account: String) -> Int32 {
        #if canImport(Security)
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
                kSecMatchLimit as String: kSecMatchLimitOne,
            ]
            return SecItemCopyMatching(query as CFDictionary, nil)
        #else
            return statusItemNotFound
        #endif
    }
}
