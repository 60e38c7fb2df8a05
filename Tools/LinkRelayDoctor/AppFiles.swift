import Foundation

/// The associated domains an app's `.entitlements` file declares.
public struct Entitlements: Sendable, Equatable {
    /// One `applinks:` entry.
    public struct AppLinksDomain: Sendable, Equatable {
        /// The host, lower-cased; `*.acme.app` for a wildcard.
        public var host: String
        /// `?mode=developer` (or another mode) was appended.
        public var mode: String?

        /// Whether this entry covers `host`: exactly, or as a wildcard for its subdomains (not
        /// the domain itself, as on iOS).
        public func covers(_ other: String) -> Bool {
            let other = other.lowercased()
            if host.hasPrefix("*.") { return other.hasSuffix(String(host.dropFirst(1))) }
            return host == other
        }
    }

    public var appLinks: [AppLinksDomain]

    /// Reads an entitlements property list (XML or binary).
    ///
    /// - Throws: ``DoctorError`` when it is not a property list of the right shape.
    public init(data: Data) throws {
        let root = try PropertyListReader.dictionary(data, what: "The entitlements file")
        let key = "com.apple.developer.associated-domains"
        guard let raw = root[key] else {
            appLinks = []
            return
        }
        guard let entries = raw as? [Any] else { throw DoctorError("\(key) is not an array of strings.") }
        appLinks = entries.compactMap { $0 as? String }.filter { $0.hasPrefix("applinks:") }.map { entry in
            let value = String(entry.dropFirst("applinks:".count))
            let parts = value.split(separator: "?", maxSplits: 1).map(String.init)
            let mode = parts.count > 1 ? parts[1].split(separator: "=", maxSplits: 1).last.map(String.init) : nil
            return AppLinksDomain(host: (parts.first ?? "").lowercased(), mode: mode)
        }
    }
}

/// The URL schemes an app's `Info.plist` registers.
public struct InfoPlist: Sendable, Equatable {
    /// Every `CFBundleURLTypes[].CFBundleURLSchemes` entry, lower-cased.
    public var urlSchemes: [String]
    /// `CFBundleIdentifier`, when it is a literal (not `$(PRODUCT_BUNDLE_IDENTIFIER)`).
    public var bundleIdentifier: String?

    /// Reads an `Info.plist` (XML or binary).
    ///
    /// - Throws: ``DoctorError`` when it is not a property list of the right shape.
    public init(data: Data) throws {
        let root = try PropertyListReader.dictionary(data, what: "The Info.plist")
        let types = root["CFBundleURLTypes"] as? [Any] ?? []
        urlSchemes = types.compactMap { $0 as? [String: Any] }.flatMap {
            ($0["CFBundleURLSchemes"] as? [Any] ?? []).compactMap { $0 as? String }
        }
        .map { $0.lowercased() }
        let identifier = root["CFBundleIdentifier"] as? String
        bundleIdentifier = identifier.flatMap { $0.contains("$(") ? nil : $0 }
    }
}

enum PropertyListReader {
    static func dictionary(_ data: Data, what: String) throws -> [String: Any] {
        let value: Any
        do {
            value = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw DoctorError("\(what) is not a property list.")
        }
        guard let dictionary = value as? [String: Any] else { throw DoctorError("\(what) is not a dictionary at the top level.") }
        return dictionary
    }
}
