import ArgumentParser
import Foundation
import LinkRelayServerCore
import LinkRelayServerHTTP

typealias S = ServeSettings

extension ServeSetting {
    /// The flag's line in `--help`: its text, its default and its environment variable.
    var argumentHelp: ArgumentHelp {
        let fallback = defaultDescription.replacingOccurrences(of: "`", with: "")
        return ArgumentHelp("\(help) Default: \(fallback). Environment: \(environmentVariable).")
    }
}

/// Reads a setting: the flag's value when given, else its environment variable's, else its
/// default; each checked by the setting's declaration.
struct SettingReader {
    let environment: [String: String]

    func integer(_ flag: Int?, _ setting: ServeSetting) throws(SettingError) -> Int? {
        if let flag { return try setting.checked(flag, from: setting.flag) }
        if case .integer(let number)? = try setting.value(in: environment) { return number }
        return setting.defaultValue == nil ? nil : setting.defaultInteger
    }

    func integer(_ flag: Int?, _ setting: ServeSetting) throws(SettingError) -> Int {
        try integer(flag, setting) ?? setting.defaultInteger
    }

    func flag(_ flag: Bool?, _ setting: ServeSetting) throws(SettingError) -> Bool? {
        if let flag { return flag }
        if case .flag(let on)? = try setting.value(in: environment) { return on }
        return setting.defaultValue == nil ? nil : setting.defaultFlag
    }

    func flag(_ flag: Bool?, _ setting: ServeSetting) throws(SettingError) -> Bool {
        try self.flag(flag, setting) ?? setting.defaultFlag
    }

    func text(_ flag: String?, _ setting: ServeSetting) throws(SettingError) -> String? {
        if let flag { return flag }
        if case .text(let text)? = try setting.value(in: environment) { return text }
        return setting.defaultText
    }

    func list(_ flag: [String], _ setting: ServeSetting) throws(SettingError) -> [String] {
        if !flag.isEmpty { return flag }
        if case .list(let items)? = try setting.value(in: environment) { return items }
        return []
    }
}

/// `serve`'s settings in force, each read and checked (``SettingReader``), then checked
/// against one another.
struct Settings {
    var host: String
    var port: Int
    var trustProxy: Bool
    var trustedProxies: [IPNetwork]
    var publicURL: URL?
    var sharedNetworkDevices: Int
    var fingerprintWindowHours: Int
    var addressFirst: Bool
    var ipv4NetworkMatch: Bool
    var sprayerDevices: Int
    var matchPrivateNetworks: Bool
    var adoptUnknownInstalls: Bool
    var keepClicksDays: Int
    var idleTimeout: Int
    var clicksPerAddress: Int
    var bodyTimeout: Int
    var maxConnections: Int?
    var linkCacheSeconds: Int
    var accessLog: Bool
    var countryHeader: String?
    /// `nil`: as the host says (on for loopback).
    var dashboard: Bool?
    var metricsPort: Int?
    var metricsHost: String
    var logFormat: LogFormat

    init(_ serve: Serve, reader: SettingReader) throws(SettingError) {
        host = try reader.text(serve.host, S.host) ?? "127.0.0.1"
        port = try reader.integer(serve.port, S.port)
        trustProxy = try reader.flag(serve.trustProxy, S.trustProxy)
        let proxies = try reader.list(serve.trustedProxy, S.trustedProxy)
        trustedProxies = try proxies.map { network throws(SettingError) in
            guard let parsed = IPNetwork(network) else {
                throw SettingError("\(S.trustedProxy.flag) takes a network such as 10.0.0.0/8 or fd00::/8, not \(network).")
            }
            return parsed
        }
        if let text = try reader.text(serve.publicURL, S.publicURL) {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw SettingError("\(S.publicURL.flag) takes an absolute http or https URL, such as https://go.acme.app.")
            }
            publicURL = url
        }
        sharedNetworkDevices = try reader.integer(serve.sharedNetworkDevices, S.sharedNetworkDevices)
        fingerprintWindowHours = try reader.integer(serve.fingerprintWindowHours, S.fingerprintWindowHours)
        addressFirst = try reader.flag(serve.addressFirst, S.addressFirst)
        ipv4NetworkMatch = try reader.flag(serve.ipv4NetworkMatch, S.ipv4NetworkMatch)
        sprayerDevices = try reader.integer(serve.sprayerDevices, S.sprayerDevices)
        matchPrivateNetworks = try reader.flag(serve.matchPrivateNetworks, S.matchPrivateNetworks)
        adoptUnknownInstalls = try reader.flag(serve.adoptUnknownInstalls, S.adoptUnknownInstalls)
        keepClicksDays = try reader.integer(serve.keepClicksDays, S.keepClicksDays)
        idleTimeout = try reader.integer(serve.idleTimeout, S.idleTimeout)
        clicksPerAddress = try reader.integer(serve.clicksPerAddress, S.clicksPerAddress)
        bodyTimeout = try reader.integer(serve.bodyTimeout, S.bodyTimeout)
        maxConnections = try reader.integer(serve.maxConnections, S.maxConnections)
        linkCacheSeconds = try reader.integer(serve.linkCacheSeconds, S.linkCacheSeconds)
        accessLog = try reader.flag(serve.accessLog, S.accessLog)
        countryHeader = try reader.text(serve.countryHeader, S.countryHeader)
        dashboard = try reader.flag(serve.dashboard, S.dashboard)
        metricsPort = try reader.integer(serve.metricsPort, S.metricsPort)
        metricsHost = try reader.text(serve.metricsHost, S.metricsHost) ?? "127.0.0.1"
        let format = try reader.text(serve.logFormat, S.logFormat) ?? "text"
        guard let logFormat = LogFormat(rawValue: format) else {
            throw SettingError("\(S.logFormat.flag) takes text or json, not \(format.prefix(40)).")
        }
        self.logFormat = logFormat
        // Against one another.
        if let metricsPort, metricsPort != 0, metricsPort == port {
            throw SettingError("\(S.metricsPort.flag) needs a port of its own, not \(S.port.flag)'s.")
        }
        if let countryHeader {
            guard ServerConfiguration.headerName(countryHeader) != nil else {
                throw SettingError("\(S.countryHeader.flag) takes a header name, such as CF-IPCountry.")
            }
            guard trustProxy else {
                throw SettingError("\(S.countryHeader.flag) needs \(S.trustProxy.flag): only your own proxy's header is believed.")
            }
        }
    }

    /// The server's configuration from these settings, its connections capped below `fileLimit`.
    func configuration(fileLimit: Int) -> ServerConfiguration {
        ServerConfiguration(
            host: host, port: port, trustProxy: trustProxy, trustedProxies: trustedProxies, publicBaseURL: publicURL,
            matcher: DeferredMatcher(
                sharedNetworkDevices: sharedNetworkDevices, fingerprintWindowHours: fingerprintWindowHours,
                matchesAddressFirst: addressFirst, scoresIPv4Networks: ipv4NetworkMatch, sprayerDevices: sprayerDevices),
            matchPrivateNetworks: matchPrivateNetworks, adoptUnknownInstalls: adoptUnknownInstalls,
            clickRetention: keepClicksDays == 0 ? nil : TimeInterval(keepClicksDays) * 86_400,
            idleTimeout: .seconds(idleTimeout), accessLog: accessLog,
            maximumConnections: min(maxConnections ?? .max, OpenFileLimit.connectionLimit(for: fileLimit, metrics: metricsPort != nil)),
            bodyTimeout: .seconds(bodyTimeout), clicksPerAddressPerMinute: clicksPerAddress,
            countryHeader: countryHeader.flatMap(ServerConfiguration.headerName),
            dashboard: dashboard ?? ServerConfiguration.isLoopback(host), metrics: metricsPort == nil ? .off : .prometheus(),
            metricsAddress: metricsPort.map { (metricsHost, $0) }, logFormat: logFormat)
    }
}
