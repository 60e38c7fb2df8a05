import Foundation
import LinkRelayServerCore
import LinkRelayServerStorage

/// A seeded generator (SplitMix64): the same seed, the same population, on every machine.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }

    /// An index drawn by `weights`.
    mutating func pick(_ weights: [Double]) -> Int {
        var roll = Double.random(in: 0..<weights.reduce(0, +), using: &self)
        for (index, weight) in weights.enumerated() {
            roll -= weight
            if roll < 0 { return index }
        }
        return weights.count - 1
    }

    /// An exponential delay with `mean`.
    mutating func exponential(mean: Double) -> Double { -mean * log(1 - Double.random(in: 0..<1, using: &self)) }
}

/// A synthetic population of phones, the networks they click from, their taps on links, and
/// installs, with the truth known: which install came from which tap.
///
/// It is built to be hard where real traffic is hard:
/// - **carrier NAT**: hundreds of phones behind one IPv4 /24;
/// - **office Wi-Fi**: dozens behind one /24;
/// - **homes**: a few phones per /24, and IPv6 households sharing a /64 (privacy addresses
///   change within it);
/// - **clusters**: most phones are one of five iPhone models, in one of a few time zones, with
///   English first, so many phones of one network look alike;
/// - people who tap twice; installs hours to days later, some beyond the link's window, some
///   from another network (Wi-Fi at the tap, cellular at the install);
/// - organic installs (no tap) from the same networks;
/// - bots and chat-preview fetchers: crawlers from data centres, and a chat app fetching the
///   link's preview from the sharer's own network with an app's user agent and no fingerprint.
struct Population {
    enum NetworkKind: Int, CaseIterable {
        case home, carrier, office, ipv6, dataCenter
    }

    /// Where the phones are. `bench` is the mix above; the others are held out from the
    /// matcher's tuning, each dense where an app's users crowd (issue 48):
    /// - `denseHouseholds`: households of 1–4 phones of one region behind one address (their
    ///   router's), 30 households in each ISP /24;
    /// - `sparseHouseholds`: the same households, each alone in its /24;
    /// - `carrierHeavy`: three in five phones behind a carrier's few NAT addresses (4 per /24,
    ///   hundreds of phones each), the rest dense households;
    /// - `ipv6Households`: households on a /64 each, every phone with its own privacy address in it.
    enum Shape: String, CaseIterable, Sendable {
        case bench, denseHouseholds = "dense-households", sparseHouseholds = "sparse-households", carrierHeavy = "carrier-heavy"
        case ipv6Households = "ipv6-households"
    }

    struct Network {
        var kind: NetworkKind
        /// The /24 or /64, as the server keys it.
        var prefix: String
        var timezone: Int
    }

    struct Device {
        var network: Int
        /// The host part (IPv4 last octet, IPv6 interface id).
        var host: Int
        var timezone: Int
        var language: Int
        var screen: Int
        var safariVersion: Int
    }

    enum ClickKind: UInt8 {
        /// A phone's tap in its browser, with the fingerprint the redirect's page adds.
        case tap
        /// A crawler from a data centre.
        case crawler
        /// A chat app fetching the preview from the sharer's network: an app's user agent, no fingerprint.
        case preview
    }

    struct Click {
        var time: Int64  // milliseconds
        var device: Int32  // the tapping device; for a preview, the sharer; -1 for a crawler
        var link: Int32
        var kind: ClickKind
        var network: Int32
    }

    enum Truth: Equatable {
        /// Tapped, and its tap is in its window and from this network: the right answer is a
        /// tap of this device.
        case matchable(device: Int)
        /// Tapped, but from another network or past the window: the right answer is organic.
        case unmatchable
        /// Never tapped.
        case organic
    }

    struct Install {
        var time: Int64
        var device: Int
        var network: Int
        var truth: Truth
    }

    static let timezones = ["America/New_York", "America/Chicago", "America/Los_Angeles", "Europe/London", "Europe/Berlin", "Asia/Tokyo"]
    static let timezoneWeights = [0.35, 0.2, 0.2, 0.1, 0.1, 0.05]
    /// (browser `navigator.language`, the app's `Locale` identifier)
    static let languages = [
        ("en-US", "en_US"), ("es-US", "es_US"), ("en-GB", "en_GB"), ("de-DE", "de_DE"), ("ja-JP", "ja_JP"), ("fr-FR", "fr_FR"),
    ]
    static let languageWeights = [0.72, 0.1, 0.06, 0.05, 0.04, 0.03]
    /// Screens in pixels (points × scale), as the redirect's page and the SDKs measure them.
    static let screens = [(1179, 2556), (1170, 2532), (1290, 2796), (828, 1792), (1284, 2778), (1125, 2436), (750, 1334)]
    static let screenWeights = [0.3, 0.25, 0.15, 0.1, 0.1, 0.06, 0.04]
    static let windows: [Int] = [168, 168, 168, 72, 24]  // hours, by link index modulo 5

    var networks: [Network] = []
    var devices: [Device] = []
    /// Every click, oldest first.
    var clicks: [Click] = []
    /// Every install, oldest first.
    var installs: [Install] = []
    let start: Int64
    let linkCount: Int

    let shape: Shape

    /// A population of `shape` whose window holds about `clickCount` clicks, from `seed`.
    init(clickCount: Int, shape: Shape = .bench, seed: UInt64 = 42, start: Date = Date(timeIntervalSince1970: 1_780_000_000)) {
        self.shape = shape
        var random = SeededGenerator(seed: seed &+ UInt64(clickCount) &+ UInt64(Shape.allCases.firstIndex(of: shape) ?? 0) &* 1_000_003)
        // Whole milliseconds, within ±10,000 years (a NaN start is 1970).
        let milliseconds = (start.timeIntervalSince1970 * 1000).rounded(.down)
        let clamped = milliseconds.isNaN ? 0 : min(max(milliseconds, -3e14), 3e14)  // ±infinity clamp to ±10,000 years
        self.start = Int64(clamped)
        linkCount = max(10, min(500, clickCount / 200))
        let week: Int64 = 7 * 24 * 3_600_000
        let tappingDevices = max(50, Int(Double(clickCount) * 0.92 / 1.2))

        // Networks, and the phones in them.
        func addNetwork(_ kind: NetworkKind) -> Int {
            let index = networks.count
            let prefix: String
            if kind == .ipv6 {
                prefix = String(format: "2001:db8:%x:%x", (index >> 16) & 0xffff, index & 0xffff)
            } else {
                // Public IPv4 /24s, each kind in its own range, one per network.
                let base = [NetworkKind.home: 81, .carrier: 147, .office: 62, .dataCenter: 34][kind] ?? 81
                prefix = "\(base + (index >> 16)).\((index >> 8) & 0xff).\(index & 0xff)"
            }
            networks.append(Network(kind: kind, prefix: prefix, timezone: random.pick(Self.timezoneWeights)))
            return index
        }
        func addDevice(network: Int) -> Int {
            let local = networks[network].timezone
            devices.append(
                Device(
                    network: network, host: Int.random(in: 1...65_000, using: &random),
                    timezone: random.chance(0.95) ? local : random.pick(Self.timezoneWeights), language: random.pick(Self.languageWeights),
                    screen: random.pick(Self.screenWeights), safariVersion: random.pick([0.5, 0.3, 0.15, 0.05])))
            return devices.count - 1
        }
        /// A household: 1–4 phones of one region behind one address (`host`), often alike.
        func addHousehold(network: Int, host: Int, privateAddresses: Bool) -> Int {
            let count = random.pick([0.3, 0.3, 0.25, 0.15]) + 1
            let language = random.pick(Self.languageWeights)
            let screen = random.pick(Self.screenWeights)
            for _ in 0..<count {
                let device = addDevice(network: network)
                devices[device].timezone = networks[network].timezone
                if !privateAddresses { devices[device].host = host }
                if random.chance(0.8) { devices[device].language = language }
                if random.chance(0.5) { devices[device].screen = screen }
            }
            return count
        }
        switch shape {
        case .bench:
            // What share of phones each kind of network holds, and how many phones one holds.
            let mix: [(NetworkKind, Double, ClosedRange<Int>)] = [
                (.home, 0.5, 1...4), (.carrier, 0.2, 200...600), (.office, 0.1, 10...60), (.ipv6, 0.2, 1...2),
            ]
            for (kind, share, size) in mix {
                var left = Int(Double(tappingDevices) * share)
                while left > 0 {
                    let network = addNetwork(kind)
                    let count = min(left, Int.random(in: size, using: &random))
                    for _ in 0..<count { _ = addDevice(network: network) }
                    left -= count
                }
            }
        case .denseHouseholds, .sparseHouseholds, .carrierHeavy, .ipv6Households:
            let householdsPerNetwork = shape == .sparseHouseholds || shape == .ipv6Households ? 1 : 30
            var left = shape == .carrierHeavy ? tappingDevices * 2 / 5 : tappingDevices
            while left > 0 {
                let network = addNetwork(shape == .ipv6Households ? .ipv6 : .home)
                // A region's /24: its households share its time zone.
                var hosts = Array(1...254)
                for index in 0..<householdsPerNetwork where left > 0 {
                    let host = hosts.remove(at: Int.random(in: 0..<hosts.count, using: &random))
                    left -= addHousehold(
                        network: network, host: shape == .ipv6Households ? index : host, privateAddresses: shape == .ipv6Households)
                }
            }
            if shape == .carrierHeavy {
                var carrier = tappingDevices * 3 / 5
                while carrier > 0 {
                    let network = addNetwork(.carrier)
                    let addresses = (0..<4).map { _ in Int.random(in: 1...254, using: &random) }
                    let count = min(carrier, Int.random(in: 200...600, using: &random))
                    for _ in 0..<count {
                        let device = addDevice(network: network)
                        devices[device].host = addresses[Int.random(in: 0..<addresses.count, using: &random)]
                    }
                    carrier -= count
                }
            }
        }
        let tapping = devices.count
        // Phones that never tap, in the same networks (organic installs come from them).
        for _ in 0..<(tapping / 4) {
            let member = devices[Int.random(in: 0..<tapping, using: &random)]
            let device = addDevice(network: member.network)
            // Beside a household's phones: a family member behind the same router, of the same region.
            if shape != .bench {
                devices[device].timezone = member.timezone
                if shape != .ipv6Households { devices[device].host = member.host }
            }
        }
        let dataCenters = (0..<max(1, clickCount / 20_000)).map { _ in addNetwork(.dataCenter) }
        // A device that installs from another network lands in a fresh home network.
        let elsewhere = (0..<max(1, tapping / 50)).map { _ in addNetwork(.home) }

        // Taps (one in five phones taps twice), bots and previews.
        var taps = [[(time: Int64, link: Int32)]](repeating: [], count: tapping)
        for device in 0..<tapping {
            let tapCount = random.chance(0.2) ? 2 : 1
            for _ in 0..<tapCount {
                let time = self.start + Int64.random(in: 0..<week, using: &random)
                let link = Int32.random(in: 0..<Int32(linkCount), using: &random)
                clicks.append(Click(time: time, device: Int32(device), link: link, kind: .tap, network: Int32(devices[device].network)))
                taps[device].append((time, link))
                if random.chance(0.03) {
                    // The sharer's chat app fetches the preview, from the sharer's network.
                    let sharer = Int.random(in: 0..<tapping, using: &random)
                    clicks.append(
                        Click(
                            time: time - 60_000, device: Int32(sharer), link: link, kind: .preview, network: Int32(devices[sharer].network))
                    )
                }
            }
        }
        for _ in 0..<(clickCount / 25) {
            let network = dataCenters[Int.random(in: 0..<dataCenters.count, using: &random)]
            clicks.append(
                Click(
                    time: self.start + Int64.random(in: 0..<week, using: &random), device: -1,
                    link: Int32.random(in: 0..<Int32(linkCount), using: &random), kind: .crawler, network: Int32(network)))
        }
        clicks.sort { $0.time < $1.time }

        // Installs: a third of the tapping phones, hours to days after their last tap; organic
        // installs from phones that never tapped.
        for device in 0..<tapping where random.chance(0.33) {
            let last = taps[device].map(\.time).max() ?? self.start
            let time = last + max(Int64(random.exponential(mean: 6 * 3_600_000)), 60_000)
            let moved = random.chance(0.12)
            let network = moved ? elsewhere[Int.random(in: 0..<elsewhere.count, using: &random)] : devices[device].network
            // The right answer: a tap of this phone still inside its link's window, from this network.
            let live = taps[device].contains { tap in tap.time <= time && time - tap.time <= Self.window(link: tap.link) }
            installs.append(
                Install(time: time, device: device, network: network, truth: !moved && live ? .matchable(device: device) : .unmatchable))
        }
        let organic = installs.count / 4
        for _ in 0..<organic {
            let device = Int.random(in: tapping..<(tapping + tapping / 4), using: &random)
            installs.append(
                Install(
                    time: self.start + Int64.random(in: 0..<(week + 2 * 86_400_000), using: &random), device: device,
                    network: devices[device].network, truth: .organic))
        }
        installs.sort { $0.time < $1.time }
    }

    /// The attribution window of a link, in milliseconds.
    static func window(link: Int32) -> Int64 { Int64(windows[Int(link) % windows.count]) * 3_600_000 }

    // MARK: Signals

    /// The address `device` has on `network` at `time` (milliseconds). In `ipv6Households` a
    /// phone's privacy address changes every day within its /64, as iOS rotates them.
    func ip(device: Int, network: Int, at time: Int64) -> String {
        let net = networks[network]
        var host = devices[device].host
        if shape == .ipv6Households, net.kind == .ipv6 {
            host = (host &* 2_654_435_761 &+ Int((time - start) / 86_400_000) &* 40_503) & 0xffff | 1
        }
        if net.kind == .ipv6 {
            return net.prefix + String(format: ":%x:%x:%x:%x", host, host &* 7 & 0xffff, host &* 13 & 0xffff, host &* 31 & 0xffff)
        }
        return net.prefix + ".\(host % 254 + 1)"
    }

    func browserUserAgent(device: Int) -> String {
        let version = ["17_4", "17_3", "16_6", "15_8"][devices[device].safariVersion]
        return
            "Mozilla/5.0 (iPhone; CPU iPhone OS \(version) like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/\(version.replacingOccurrences(of: "_", with: ".")) Mobile/15E148 Safari/604.1"
    }

    static let appUserAgent = "Acme Shop/2.3.0 iOS/17.4.1"
    static let previewUserAgent = "WhatsApp/2.24.6.77 i"
    static let crawlerUserAgent = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
}
