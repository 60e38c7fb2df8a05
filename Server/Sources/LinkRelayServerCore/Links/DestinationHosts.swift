import Foundation

/// Where a project lets links made with an SDK key send people: the key ships in apps, so a link
/// it makes to any site would be an open redirect on the brand's domain.
package struct DestinationHosts: Sendable, Hashable {
    /// How the list is kept.
    package enum Mode: String, Sendable, CaseIterable {
        /// The default: the hosts the project's links and templates use; each link or template
        /// an admin makes adds its hosts (an SDK key's never does).
        case learned
        /// Only the hosts an admin listed.
        case listed
        /// Any host, said explicitly (the dashboard warns about it).
        case any
    }

    package var mode: Mode
    /// `acme.example`, `*.acme.example` (every subdomain, not the domain itself), at most 100.
    package var hosts: [String]

    package init(mode: Mode, hosts: [String]) {
        self.mode = mode
        self.hosts = hosts
    }

    /// The most hosts a list holds (a learned list stops growing there; an admin can list them).
    package static let maxHosts = 100

    /// Whether an SDK key's link may go to `url`.
    package func allows(_ url: String) -> Bool {
        mode == .any || Self.allows(hosts, url)
    }

    /// `acme.example`, `*.acme.example` or `localhost`: letters, digits, `-` and `.`.
    package static func isValidPattern(_ pattern: String) -> Bool {
        let host = pattern.hasPrefix("*.") ? String(pattern.dropFirst(2)) : pattern
        guard (1...253).contains(host.utf8.count), !host.hasPrefix("."), !host.hasSuffix("."), !host.contains("..") else { return false }
        return host.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." }
    }

    /// Whether `url`'s host is one of `patterns` (`*.acme.example` covers `shop.acme.example`,
    /// not `acme.example` itself); none when `patterns` is empty.
    package static func allows(_ patterns: [String], _ url: String) -> Bool {
        guard let host = URL(string: url)?.host?.lowercased() else { return false }
        return patterns.contains { pattern in
            pattern.hasPrefix("*.") ? host.hasSuffix(String(pattern.dropFirst(1))) : host == pattern
        }
    }

    /// The hosts of `urls` (lower-cased, valid names only), in order, once each.
    package static func hosts(of urls: [String?]) -> [String] {
        adding(urls.compactMap { $0.flatMap { URL(string: $0)?.host?.lowercased() } }.filter(isValidPattern), to: [])
    }

    /// `known` followed by those of `hosts` it does not cover yet, at most ``maxHosts`` in all.
    package static func adding(_ hosts: [String], to known: [String]) -> [String] {
        var result = known
        for host in hosts where result.count < maxHosts && !allows(result, "https://\(host)/") && !result.contains(host) {
            result.append(host)
        }
        return result
    }
}

extension DestinationHosts {
    /// The hosts an admin sets: `mode` (`learned`, `listed` or `any`; `nil` with a list is
    /// `listed`) and `hosts` (lower-cased, each once, at most ``maxHosts``).
    /// - Throws: ``LinkFieldError`` naming `mode` or `hosts`: an unknown mode, a name that is
    ///   not a host pattern, too many, or an empty list without a mode (which would allow no
    ///   host; before 0.7 it meant any).
    package static func requested(mode text: String?, hosts names: [String]) throws(LinkFieldError) -> DestinationHosts {
        let mode = try text.map { text throws(LinkFieldError) -> Mode in
            guard let mode = Mode(rawValue: text) else { throw LinkFieldError("mode", "must be learned, listed or any") }
            return mode
        }
        guard names.count <= maxHosts else { throw LinkFieldError("hosts", "must be a list of at most \(maxHosts) host names") }
        var hosts: [String] = []
        for name in names {
            let host = name.lowercased()
            guard isValidPattern(host) else {
                throw LinkFieldError("hosts", "must hold host names such as acme.example or *.acme.example")
            }
            if !hosts.contains(host) { hosts.append(host) }
        }
        guard let mode else {
            guard !hosts.isEmpty else {
                throw LinkFieldError(
                    "hosts",
                    "is empty, which allows no host: send \"mode\": \"any\" to allow every host, or \"learned\" for the hosts your links use"
                )
            }
            return DestinationHosts(mode: .listed, hosts: hosts)
        }
        return DestinationHosts(mode: mode, hosts: hosts)
    }
}
