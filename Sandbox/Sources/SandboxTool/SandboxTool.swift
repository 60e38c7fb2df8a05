import Foundation
import LinkRelaySandbox
import LinkRelaySimulator

/// linkrelay-sandbox: the four providers' emulations over HTTP on loopback, for tests and for a
/// Debug build of an app. See the README's Sandbox section.
@main
struct SandboxTool {
    /// Every provider's settings, from each emulation, in the order the providers are listed.
    static var providerSettings: [SandboxSetting] {
        var settings: [SandboxSetting] = []
        for emulation in Sandbox.emulations { settings += emulation.sandboxSettings }
        return settings
    }

    static var usage: String {
        var lines = [
            "usage: linkrelay-sandbox [--host 127.0.0.1] [--port 8642] [--quiet] [--request-history 1000]",
            "                         [--max-header-bytes 32768] [--max-header-fields 100] [--max-body-bytes 1048576]",
            "                         [--idle-timeout 30] [--transfer-timeout 30]   (seconds; inf for none)",
            "                         [provider options]",
            "provider options:",
        ]
        for setting in providerSettings {
            guard let option = setting.option else { continue }
            let flag = "  \(option) \(setting.kind == .text ? "KEY" : "HOST")"
            lines.append(
                flag.padding(toLength: 34, withPad: " ", startingAt: 0)
                    + "\(setting.summary) (default \(setting.defaultValue.joined(separator: ", ")))")
        }
        return lines.joined(separator: "\n")
    }

    static func main() async {
        var host = "127.0.0.1"
        var port: UInt16 = 8642
        var quiet = false
        var settings = SandboxSettings()
        var requestHistory = 1_000
        var limits = SandboxServer.Limits()
        var arguments = ProcessInfo.processInfo.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--quiet":
                quiet = true
                continue
            case "--help", "-h":
                write(usage)
                exit(0)
            default:
                break
            }
            guard let value = arguments.popFirst() else { fail("\(argument) needs a value") }
            switch argument {
            case "--host": host = value
            case "--port":
                guard let number = UInt16(value) else { fail("--port takes a number from 0 to 65535") }
                port = number
            case "--request-history":
                guard let number = Int(value), number >= 0 else { fail("--request-history takes a whole number, 0 or more") }
                requestHistory = number
            case "--max-header-bytes": limits.maximumHeaderSize = wholeNumber(value, for: argument)
            case "--max-header-fields": limits.maximumHeaderCount = wholeNumber(value, for: argument)
            case "--max-body-bytes": limits.maximumBodySize = wholeNumber(value, for: argument)
            case "--idle-timeout": limits.idleTimeout = seconds(value, for: argument)
            case "--transfer-timeout": limits.transferTimeout = seconds(value, for: argument)
            default:
                guard let setting = providerSettings.first(where: { $0.option == argument }) else { fail("unknown option \(argument)") }
                if setting.kind == .hosts {
                    settings[values: setting] = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                } else {
                    settings[setting] = value
                }
            }
        }

        let sandbox = Sandbox(settings: settings, requestHistoryLimit: requestHistory)
        let log: (@Sendable (String) -> Void)? = quiet ? nil : { @Sendable line in write(line) }
        let server: SandboxServer
        do {
            server = try SandboxServer(sandbox: sandbox, host: host, port: port, limits: limits, log: log)
        } catch {
            fail("\(error)")
        }
        do {
            let baseURL = try await server.start()
            write("LinkRelay Sandbox listening on \(baseURL.absoluteString)")
            for provider in try await sandbox.describe().providers {
                let name = provider.name.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                write("  \(name) \(provider.baseURL.absoluteString)   hosts: \(provider.hosts.joined(separator: ", "))")
            }
            write("  admin      \(baseURL.absoluteString)/_admin")
            await server.wait()
        } catch {
            fail("could not start on \(host):\(port): \(error)")
        }
    }

    /// One line to standard output, unbuffered, so a log piped to a file is current.
    static func write(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func wholeNumber(_ value: String, for option: String) -> Int {
        guard let number = Int(value), number >= 1 else { fail("\(option) takes a whole number, 1 or more") }
        return number
    }

    static func seconds(_ value: String, for option: String) -> TimeInterval {
        guard let seconds = TimeInterval(value), seconds > 0 else { fail("\(option) takes seconds, more than 0 (inf for none)") }
        return seconds
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("linkrelay-sandbox: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}
