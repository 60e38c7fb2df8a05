import Foundation

/// Checks adapters run on their configuration when it is created, so a mistake fails at once
/// with ``DeepLinkError/Code-swift.struct/invalidConfiguration`` and a message naming the field,
/// not later with a confusing network error.
@_spi(Backend) public enum ConfigurationValidation {
    /// Hosts where plain `http` is allowed, for local servers and the Sandbox.
    public static let loopbackHosts: Set<String> = ["localhost", "127.0.0.1", "::1"]

    /// A base URL: absolute, with a host, and HTTPS unless the host is loopback.
    @discardableResult
    public static func baseURL(_ url: URL, field: String, backend: BackendID) throws -> URL {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
            throw DeepLinkError(
                .invalidConfiguration, "\(field) must be an absolute URL with a host.", backend: backend)
        }
        let bareHost = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard scheme == "https" || (scheme == "http" && loopbackHosts.contains(bareHost)) else {
            throw DeepLinkError(
                .invalidConfiguration,
                "\(field) must use https (plain http is allowed only for localhost, 127.0.0.1 and ::1).",
                backend: backend)
        }
        return url
    }

    /// An attribution window in hours: 1…2160 (90 days).
    @discardableResult
    public static func attributionWindow(_ hours: Int, field: String, backend: BackendID) throws -> Int {
        guard (1...2160).contains(hours) else {
            throw DeepLinkError(
                .invalidConfiguration, "\(field) must be between 1 and 2160 hours; it is \(hours).", backend: backend)
        }
        return hours
    }

    /// A required API key: not empty or blank. The key itself is never repeated.
    @discardableResult
    public static func apiKey(_ key: String, field: String, backend: BackendID) throws -> String {
        guard !key.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw DeepLinkError(
                .invalidConfiguration, "\(field) is required, and it is empty: give the key from the provider's dashboard.",
                backend: backend)
        }
        return key
    }

    /// An optional API key, when one is given: not empty or blank. The key itself is never
    /// repeated.
    @discardableResult
    public static func apiKey(_ key: String?, field: String, backend: BackendID) throws -> String? {
        guard let key else { return nil }
        guard !key.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw DeepLinkError(.invalidConfiguration, "\(field) must not be empty when given.", backend: backend)
        }
        return key
    }
}
