import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The client's address as the deferred match uses it: public or nothing, and its network.
package enum ClientAddress {
    /// The address the request came from. Without a trusted proxy, the connection's peer. Behind
    /// one, `X-Forwarded-For` read from the right, as the proxies wrote it: each proxy appends the
    /// address it was reached from, so the rightmost entries are the proxies' own words and the
    /// leftmost are whatever the client sent. The client is the rightmost entry that is not one
    /// of `trustedProxies`, the proxies before the one the server is reached from (nginx's
    /// `$proxy_add_x_forwarded_for`, a load balancer's); with none named, the rightmost entry,
    /// which the proxy in front wrote: a client on a private network behind it is its private
    /// address, whatever it wrote to the left. When every entry is a trusted address, the
    /// leftmost. An entry that is not an IPv4 or IPv6 address ends the walk (the client wrote it),
    /// and with no address found the peer is the client. `::ffff:` mapped IPv4 is unwrapped.
    package static func of(forwardedFor: String?, peer: String?, trustProxy: Bool, trustedProxies: [IPNetwork] = []) -> String? {
        var chosen = peer.flatMap { normalized(Substring($0)) }
        if trustProxy, let forwardedFor {
            var leftmostTrusted: String?
            var found: String?
            for entry in forwardedFor.split(separator: ",").reversed() {
                guard let address = normalized(entry), let bytes = IPNetwork.bytes(of: address) else { break }
                if trustedProxies.contains(where: { $0.contains(bytes) }) {
                    leftmostTrusted = address
                } else {
                    found = address
                    break
                }
            }
            if let address = found ?? leftmostTrusted { chosen = address }
        }
        return chosen
    }

    /// `address` without the spaces and tabs around it, `::ffff:a.b.c.d` as `a.b.c.d`; `nil`
    /// when empty. Read as bytes: Foundation's `trimmingCharacters(in:)` took a tenth of a
    /// redirect's CPU on Linux (perf, under wrk).
    private static func normalized(_ text: Substring) -> String? {
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
            let last = utf8.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
        else { return nil }
        var address = utf8[first...last]
        let mapped = Array("::ffff:".utf8)
        if address.count > mapped.count, zip(address, mapped).allSatisfy({ $0 | 0x20 == $1 | 0x20 }), address.contains(UInt8(ascii: ".")) {
            address = address.dropFirst(mapped.count)
        }
        return String(decoding: address, as: UTF8.self)
    }

    /// Whether `chosen`, the client read from `forwardedFor` with no proxy named
    /// (`--trusted-proxy`), looks like a proxy of the operator's rather than a client: a
    /// loopback or private address with another address before it (a load balancer in front of
    /// nginx appears so, and then every client behind it has that address; so does a client on a
    /// private network that wrote the header itself).
    package static func looksLikeUnnamedProxy(_ chosen: String?, forwardedFor: String?) -> Bool {
        // A header of one entry (an honest client behind one proxy, the usual tap) is settled
        // without parsing an address.
        guard let chosen, let forwardedFor, forwardedFor.utf8.contains(UInt8(ascii: ",")), let bytes = IPNetwork.bytes(of: chosen),
            IPNetwork.privateAndLoopback.contains(where: { $0.contains(bytes) })
        else { return false }
        let entries = forwardedFor.split(separator: ",")
        guard entries.count >= 2, let last = entries.last.flatMap({ normalized($0) }), last == chosen else { return false }
        return normalized(entries[entries.count - 2]).flatMap(IPNetwork.bytes(of:)) != nil
    }

    /// The network an address belongs to (IPv4 /24 as `203.0.113`, IPv6 /64 as its first four
    /// groups, expanded), `nil` for an address that is not public (private, loopback,
    /// link-local, carrier NAT, documentation-free ranges LinkForty's matcher also excludes) or
    /// not an address.
    package static func networkPrefix(of address: String) -> String? {
        networkPrefix(of: address, includingPrivate: false)
    }

    /// Whether `address` (or a network prefix) is IPv6: it holds a colon, which no IPv4 form does.
    package static func isIPv6(_ address: String) -> Bool {
        address.utf8.contains(UInt8(ascii: ":"))
    }

    /// The network of `address`; with `includingPrivate`, private and loopback addresses have
    /// one too (for trying deferred links on one machine or a LAN: never in production, where
    /// every phone behind a home router would share `192.168.1`).
    package static func networkPrefix(of address: String, includingPrivate: Bool) -> String? {
        if isIPv6(address) { return ipv6Prefix(address, includingPrivate: includingPrivate) }
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
        let tail =
            halves.count == 2 && !halves[1].isEmpty
            ? halves[1].split(separator: ":", omittingEmptySubsequences: false).map(String.init) : []
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

/// A network in CIDR notation (`10.0.0.0/8`, `fd00::/8`): the proxies `X-Forwarded-For` may pass
/// through.
package struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network's address bytes (4 or 16).
    let bytes: [UInt8]
    /// The prefix length in bits.
    let length: Int

    /// Reads `10.0.0.0/8`, `2001:db8::/32`, or a single address (all its bits); `nil` otherwise.
    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let bytes = Self.bytes(of: first) else { return nil }
        let bits = bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...bits).contains(length) else { return nil }
            self.length = length
        } else {
            length = bits
        }
        self.bytes = bytes
    }

    package var description: String {
        (bytes.count == 4
            ? bytes.map(String.init).joined(separator: ".")
            : stride(from: 0, to: 16, by: 2).map {
                String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
            }.joined(separator: ":")) + "/\(length)"
    }

    /// Whether the address `other` (4 or 16 bytes) is in this network.
    func contains(_ other: [UInt8]) -> Bool {
        guard other.count == bytes.count else { return false }
        var remaining = length
        for index in bytes.indices where remaining > 0 {
            let bits = min(remaining, 8)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[index] & mask != other[index] & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// Loopback and private networks (IPv4 127/8, 10/8, 172.16/12, 192.168/16, 100.64/10;
    /// IPv6 ::1, fc00::/7, fe80::/10): where a reverse proxy in front of the server usually is.
    package static let privateAndLoopback: [IPNetwork] = [
        "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "::1/128", "fc00::/7", "fe80::/10",
    ].compactMap(IPNetwork.init)

    /// The bytes of an IPv4 (dotted quad) or IPv6 address; `nil` when `text` is not one.
    static func bytes(of text: String) -> [UInt8]? {
        if ClientAddress.isIPv6(text) {
            var address = in6_addr()
            guard text.utf8.count <= 64, inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            return withUnsafeBytes(of: &address) { Array($0) }
        }
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return nil }
        var result: [UInt8] = []
        for octet in octets {
            guard (1...3).contains(octet.count), octet.allSatisfy(\.isASCII), let value = UInt8(octet) else { return nil }
            result.append(value)
        }
        return result
    }
}
