import Foundation

/// Which client addresses a provider can attribute, and when two are one network: public
/// addresses only (no private, loopback, link-local, CGNAT or benchmark ranges), IPv4 compared by
/// /24 and IPv6 by the first four groups, as LinkForty Core does. Shared by the emulations that
/// match installs by network.
package enum IPAddressRules {
    /// Both addresses attributable (public), and in one network: IPv4 /24, IPv6 first four groups.
    package static func sameNetwork(_ a: String, _ b: String) -> Bool {
        let a = stripMapped(a)
        let b = stripMapped(b)
        guard isAttributable(a), isAttributable(b) else { return false }
        if let x = ipv4(a), let y = ipv4(b) { return x[0..<3] == y[0..<3] }
        guard a.contains(":"), b.contains(":") else { return false }
        return a.lowercased().split(separator: ":", omittingEmptySubsequences: false).prefix(4)
            == b.lowercased().split(separator: ":", omittingEmptySubsequences: false).prefix(4)
    }

    package static func isAttributable(_ address: String) -> Bool {
        let address = stripMapped(address)
        if let octets = ipv4(address) {
            let (a, b) = (octets[0], octets[1])
            switch a {
            case 0, 10, 127: return false
            case 100 where (64...127).contains(b): return false
            case 169 where b == 254: return false
            case 172 where (16...31).contains(b): return false
            case 192 where b == 168: return false
            case 192 where b == 0 && octets[2] == 0: return false
            case 198 where b == 18 || b == 19: return false
            default: return true
            }
        }
        let lower = address.lowercased()
        guard lower.contains(":"), lower.allSatisfy({ $0.isHexDigit || $0 == ":" }) else { return false }
        if lower == "::" || lower == "::1" { return false }
        if lower.hasPrefix("fc") || lower.hasPrefix("fd") { return false }
        if ["fe8", "fe9", "fea", "feb"].contains(where: { lower.hasPrefix($0) }) { return false }
        return true
    }

    private static func stripMapped(_ address: String) -> String {
        address.lowercased().hasPrefix("::ffff:") ? String(address.dropFirst(7)) : address
    }

    private static func ipv4(_ address: String) -> [Int]? {
        let parts = address.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let octets = parts.compactMap { Int($0) }.filter { (0...255).contains($0) }
        return octets.count == 4 ? octets : nil
    }
}
