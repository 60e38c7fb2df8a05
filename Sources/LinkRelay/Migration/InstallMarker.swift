import Foundation

#if canImport(Security)
import Security
#endif

/// A mark that an earlier install of the app ran on this device, kept somewhere that survives
/// deleting the app, so that a reinstall can be told from a first install
/// (``AppLaunch/Kind/reinstall``).
///
/// On Apple platforms the default is ``KeychainInstallMarker``: Keychain items outlive the app.
/// Elsewhere there is none, and a reinstall looks like a first install.
public protocol InstallMarker: Sendable {
    /// Whether an install of this app left the mark (this one or an earlier one).
    func isPresent() -> Bool
    /// Leaves the mark. Called on every launch whose mark was missing; failures are ignored.
    func place()
}

/// The install marker in the Keychain: a generic-password item (value `"1"`, readable after the
/// first unlock, never synced or migrated to another device). Keychain items outlive the app,
/// so after a reinstall the item is still there while the app's files are gone.
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

    public func isPresent() -> Bool {
        ([(service, account)] + recognised).contains { Self.exists(service: $0.service, account: $0.account) }
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

    private static func exists(service: String, account: String) -> Bool {
        #if canImport(Security)
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        return SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess
        #else
        return false
        #endif
    }
}
