import Foundation
import Hummingbird

/// The client's address as the deferred match uses it: public or nothing, and its network.
public enum ClientAddress {
    /// The address the request came from: `X-Forwarded-For`'s first entry when the proxy is
    /// trusted, else the connection's peer; `::ffff:` mapped IPv4 unwrapped.
    static func of(forwardedFor: String?, peer: String?, trustProxy: Bool) -> String? {
        let raw = trustProxy ? (forwardedFor?.split(separator: ",").first.map(String.init) ?? peer) : peer
        guard var address = raw?.trimmingCharacters(in: .whitespaces), !address.isEmpty else { return nil }
        if address.lowercased().hasPrefix("::ffff:"), address.utf8.contains(UInt8(ascii: ".")) { address = String(address.dropFirst(7)) }
        return address
    }

    /// The address `request` came from.
    static func of(_ request: Request, _ context: ServerContext, trustProxy: Bool) -> String? {
        let forwarded = request.headers.first { $0.name.canonicalName == "x-forwarded-for" }?.value
        return of(forwardedFor: forwarded, peer: context.remoteAddress?.ipAddress, trustProxy: trustProxy)
    }

    /// The network an address belongs to (IPv4 /24 as `203.0.113`, IPv6 /64 as its first four
    /// groups, expanded), `nil` for an address that is not public (private, loopback,
    /// link-local, carrier NAT, documentation-free ranges LinkForty's matcher also excludes) or
    /// not an address.
    public static func networkPrefix(of address: String) -> String? {
        networkPrefix(of: address, includingPrivate: false)
    }

    /// The network of `address`; with `includingPrivate`, private and loopback addresses have
    /// one too (for trying deferred links on one machine or a LAN: never in production, where
    /// every phone behind a home router would share `192.168.1`).
    public static func networkPrefix(of address: String, includingPrivate: Bool) -> String? {
        if address.utf8.contains(UInt8(ascii: ":")) { return ipv6Prefix(address, includingPrivate: includingPrivate) }
        let octets = address.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        guard octets.count == 4, octets.allSatisfy({ $0 != nil && (0...255).contains($0!) }) else { return nil }
        let o = octets.map { $0! }
        let excluded =
            o[0] == 0 || o[0] == 10 || o[0] == 127 || (o[0] == 100 && (64...127).contains(o[1])) || (o[0] == 169 && o[1] == 254)
            || (o[0] == 172 && (16...31).contains(o[1])) || (o[0] == 192 && o[1] == 0 && o[2] == 0) || (o[0] == 192 && o[1] == 168)
            || (o[0] == 198 && (18...19).contains(o[1])) || o[0] >= 224
        return excluded && !includingPrivate ? nil : "\(o[0]).\(o[1]).\(o[2])"
    }

    private static func ipv6Prefix(_ address: String, includingPrivate: Bool) -> String? {
        let lower = address.lowercased()
        let halves = lower.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        let head = halves[0].isEmpty ? [] : halves[0].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let tail = halves.count == 2 && !halves[1].isEmpty ? halves[1].split(separator: ":", omittingEmptySubsequences: false).map(String.init) : []
        let missing = 8 - head.count - tail.count
        guard halves.count == 2 ? missing >= 1 : missing == 0 else { return nil }
        let groups = head + Array(repeating: "0", count: halves.count == 2 ? missing : 0) + tail
        guard groups.count == 8, groups.allSatisfy({ (1...4).contains($0.count) && UInt16($0, radix: 16) != nil }) else { return nil }
        let values = groups.map { UInt16($0, radix: 16)! }
        let excluded =
            values.allSatisfy { $0 == 0 } || (values.dropLast().allSatisfy { $0 == 0 } && values[7] == 1)
            || (values[0] & 0xfe00) == 0xfc00 || (values[0] & 0xffc0) == 0xfe80
        return excluded && !includingPrivate ? nil : values.prefix(4).map { String($0, radix: 16) }.joined(separator: ":")
    }
}
