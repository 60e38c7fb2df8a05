import Foundation
import Testing

@testable import LinkRelayServerCore

/// `serve`'s settings declared once (``ServeSettings``): the names, the values each takes from a
/// flag or the environment, the clamp, and the documentation's table.
@Suite("Serve settings")
struct ServeSettingsTests {
    @Test("each setting has its own flag and environment variable, LINKRELAY_ and its name")
    func names() {
        let names = ServeSettings.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(ServeSettings.idleTimeout.environmentVariable == "LINKRELAY_IDLE_TIMEOUT")
        #expect(ServeSettings.ipv4NetworkMatch.environmentVariable == "LINKRELAY_IPV4_NETWORK_MATCH")
        #expect(ServeSettings.all.allSatisfy { $0.environmentVariable.hasPrefix("LINKRELAY_") && !$0.environmentVariable.contains("-") })
        #expect(ServeSettings.all.count == 25)
    }

    @Test("an integer is taken in its range (or its one other value), refused outside it naming where it came from")
    func integers() throws {
        let days = ServeSettings.keepClicksDays
        #expect(try days.checked(0, from: days.flag) == 0)
        #expect(try days.checked(90, from: days.flag) == 90)
        #expect(throws: SettingError("--keep-clicks-days takes 0 or 90…36500, not 89.")) { try days.checked(89, from: days.flag) }
        #expect(throws: SettingError("LINKRELAY_SPRAYER_DEVICES takes 2 or more, not 1.")) {
            try ServeSettings.sprayerDevices.value(in: ["LINKRELAY_SPRAYER_DEVICES": "1"])
        }
        #expect(throws: SettingError("LINKRELAY_IDLE_TIMEOUT takes a whole number (1…3600), not \"soon\".")) {
            try ServeSettings.idleTimeout.value(in: ["LINKRELAY_IDLE_TIMEOUT": "soon"])
        }
        #expect(try ServeSettings.idleTimeout.value(in: ["LINKRELAY_IDLE_TIMEOUT": " 45 "]) == .integer(45))
        #expect(try ServeSettings.idleTimeout.value(in: [:]) == nil)
        // A value that did not come through the command line is clamped instead.
        #expect(ServeSettings.idleTimeout.clamped(0) == 1)
        #expect(ServeSettings.idleTimeout.clamped(Int.max) == 3600)
        #expect(ServeSettings.idleTimeout.clamped(Duration.seconds(-5)) == .seconds(1))
        #expect(days.clamped(0) == 0)
        #expect(days.clamped(10) == 90)
    }

    @Test("a flag reads true/false, 1/0, yes/no, on/off; a list is comma-separated; anything else names the variable")
    func flagsAndLists() throws {
        for (text, on) in [
            ("true", true), ("1", true), ("YES", true), ("on", true), ("false", false), ("0", false), ("no", false), ("off", false),
        ] {
            #expect(try ServeSettings.trustProxy.value(in: ["LINKRELAY_TRUST_PROXY": text]) == .flag(on))
        }
        #expect(throws: SettingError("LINKRELAY_TRUST_PROXY takes true or false, not \"maybe\".")) {
            try ServeSettings.trustProxy.value(in: ["LINKRELAY_TRUST_PROXY": "maybe"])
        }
        #expect(
            try ServeSettings.trustedProxy.value(in: ["LINKRELAY_TRUSTED_PROXY": "10.0.0.0/8, fd00::/8,"])
                == .list(["10.0.0.0/8", "fd00::/8"]))
    }

    @Test(
        "the ranges agree with the rules they stand for: clicks kept at least the longest attribution window, which is the fingerprint's longest"
    )
    func rangesAgree() throws {
        guard case .integer(let days, _) = ServeSettings.keepClicksDays.kind,
            case .integer(let hours, _) = ServeSettings.fingerprintWindowHours.kind
        else {
            Issue.record("not integers")
            return
        }
        #expect(TimeInterval(days.lowerBound) * 86_400 == DeferredMatcher.lookback)
        #expect(TimeInterval(hours.upperBound) * 3600 == DeferredMatcher.lookback)
        // The matcher's own defaults and clamps are the settings'.
        let matcher = DeferredMatcher(sharedNetworkDevices: 0, fingerprintWindowHours: 99_999, sprayerDevices: 0)
        #expect(matcher.sharedNetworkDevices == 2)
        #expect(matcher.fingerprintWindowHours == 2160)
        #expect(matcher.sprayerDevices == 2)
        #expect(DeferredMatcher().fingerprintWindowHours == ServeSettings.fingerprintWindowHours.defaultInteger)
    }

    @Test("Docs/Configuration.md's table is the declarations' table, row for row")
    func documentation() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Docs/Configuration.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let rows = text.split(separator: "\n", omittingEmptySubsequences: false).filter {
            $0.hasPrefix("| `--") || $0.hasPrefix("| Option")
        }
        let expected = ServeSettings.markdownTable.split(separator: "\n").filter { !$0.hasPrefix("|---") }
        #expect(rows.map(String.init) == expected.map(String.init))
    }
}
