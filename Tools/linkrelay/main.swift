// linkrelay: checks an app's link configuration offline, and resolves or parses a link.
//
//   linkrelay doctor --app-id TEAMID.bundle.id --provider linkforty --domain go.acme.app --scheme acme \
//                    [--aasa FILE|URL] [--entitlements FILE] [--info-plist FILE] [--link URL]... [--expect-web URL]...
//                    [--app-clip-id TEAMID.bundle.id.Clip] [--config FILE] [--json]
//   linkrelay resolve URL --provider NAME --domain HOST [--scheme S] [--api-key KEY] [--sandbox URL] [--json]
//   linkrelay parse URL
//
// Exit status: 0 when nothing failed (warnings allowed), 1 on a failure, 64 on a usage error.
import Foundation
import LinkRelay
import LinkRelayDoctor
import LinkRelaySimulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let usage = """
    Usage:
      linkrelay doctor --app-id TEAMID.bundle.id --provider NAME --domain HOST... [--scheme S...]
                       [--aasa FILE|URL] [--entitlements FILE] [--info-plist FILE] [--link URL...]
                       [--expect-web URL...] [--app-clip-id TEAMID.bundle.id.Clip] [--config FILE] [--json]
      linkrelay resolve URL --provider NAME --domain HOST... [--scheme S...] [--api-key KEY] [--sandbox URL]
      linkrelay parse URL

    Providers: \(BackendClaims.providers.joined(separator: ", ")).
    A --config file is JSON: {"appID": "…", "provider": "…", "domains": […], "schemes": […], "links": […]}.
    """

/// The command line, read into options: `--name value` (repeatable) and flags.
struct Options {
    var positional: [String] = []
    var values: [String: [String]] = [:]
    var flags: Set<String> = []

    static let flagNames: Set<String> = ["json", "help"]

    init(_ arguments: ArraySlice<String>) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            let name = String(argument.dropFirst(2))
            if Self.flagNames.contains(name) {
                flags.insert(name)
            } else if let value = iterator.next() {
                values[name, default: []].append(value)
            } else {
                throw DoctorError("--\(name) needs a value.")
            }
        }
    }

    func one(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
}

func fail(_ message: String, code: Int32 = 64) -> Never {
    FileHandle.standardError.write(Data("linkrelay: \(message)\n\n\(usage)\n".utf8))
    exit(code)
}

func read(_ path: String, _ what: String) -> Data {
    guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read the \(what) at \(path).", code: 1) }
    return data
}

func printJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    guard let data = try? encoder.encode(value) else { fail("could not encode the result.", code: 1) }
    print(String(decoding: data, as: UTF8.self))
}

/// The backend claims from --config, then the options (options win).
func claims(_ options: Options) -> (claims: BackendClaims, appID: String?) {
    struct ConfigFile: Decodable {
        var appID: String?
        var provider: String?
        var domains: [String]?
        var schemes: [String]?
        var links: [URL]?
    }
    var config = ConfigFile()
    if let path = options.one("config") {
        do {
            config = try JSONDecoder().decode(ConfigFile.self, from: read(path, "configuration"))
        } catch {
            fail("the configuration \(path) is not valid: \(error)", code: 1)
        }
    }
    guard let provider = options.one("provider") ?? config.provider else { fail("name the provider with --provider.") }
    let links = options.all("link").compactMap(URL.init(string:))
    return (
        BackendClaims(
            provider: provider, domains: options.values["domain"] ?? config.domains ?? [],
            schemes: options.values["scheme"] ?? config.schemes ?? [],
            links: links.isEmpty ? config.links ?? [] : links),
        options.one("app-id") ?? config.appID
    )
}

/// Fetches an association file, reporting status, type and any redirect.
func fetch(_ url: URL) async -> (Data, FetchReport) {
    do {
        return try await FetchReport.fetch(url, over: URLSessionTransport())
    } catch {
        fail("could not fetch \(url.absoluteString): \(error)", code: 1)
    }
}

func doctor(_ options: Options) async -> Int32 {
    let (claims, appID) = claims(options)
    guard let appID else { fail("give the app id with --app-id TEAMID.bundle.id.") }
    var input = DoctorInput(appID: appID, backend: claims)
    if let source = options.one("aasa") {
        input.associationSource = source
        if let url = URL(string: source), url.scheme == "https" || url.scheme == "http" {
            (input.associationFile, input.fetch) = await fetch(url)
        } else {
            input.associationFile = read(source, "association file")
        }
    }
    input.webOnlyLinks = options.all("expect-web").map { text in
        guard let url = URL(string: text), url.host != nil else { fail("--expect-web takes a URL, e.g. https://go.acme.app/privacy.") }
        return url
    }
    input.appClipID = options.one("app-clip-id")
    input.entitlements = options.one("entitlements").map { read($0, "entitlements file") }
    input.infoPlist = options.one("info-plist").map { read($0, "Info.plist") }
    let report = Doctor.run(input)
    if options.flags.contains("json") {
        printJSON(report)
    } else {
        for check in report.checks {
            let mark =
                switch check.status {
                case .pass: "✔"
                case .warning: "!"
                case .failure: "✘"
                }
            print("\(mark) \(check.message)")
            if let fix = check.fix { print("    → \(fix)") }
        }
        let failures = report.checks.filter { $0.status == .failure }.count
        let warnings = report.checks.filter { $0.status == .warning }.count
        print("\n\(report.checks.count) checks: \(failures) failed, \(warnings) warning\(warnings == 1 ? "" : "s").")
    }
    return report.status == .failure ? 1 : 0
}

/// What `resolve` prints: the link, and the requests made for it (method and URL, never headers
/// or bodies: they carry keys).
struct Resolution: Encodable {
    var link: DeepLink
    var requests: [String]
}

/// Passes requests on and remembers their method and URL.
final class RecordingTransport: HTTPTransport, Sendable {
    let base: any HTTPTransport
    private let log = Locked<[String]>([])

    init(base: any HTTPTransport) { self.base = base }

    var requests: [String] { log.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        log.withLock { $0.append("\(request.method) \(request.url.absoluteString)") }
        return try await base.send(request)
    }
}

func resolve(_ options: Options) async -> Int32 {
    guard let text = options.positional.first, let url = URL(string: text) else { fail("give the link to resolve.") }
    let (claims, _) = claims(options)
    let backend: any DeepLinkBackend
    do {
        backend = try claims.makeBackend(apiKey: options.one("api-key") ?? ProcessInfo.processInfo.environment["LINKRELAY_API_KEY"])
    } catch {
        fail("\(error)", code: 1)
    }
    var transport: any HTTPTransport = URLSessionTransport()
    if let sandbox = options.one("sandbox").flatMap(URL.init(string:)) {
        // The app's own link domains, and the providers' API hosts as the sandbox serves them.
        let settings = SandboxSettings()
        let hosts = Set(claims.domains + SandboxProvider.allCases.flatMap(settings.hosts(of:)))
        transport = HostRewritingTransport(hosts: hosts, to: sandbox)
    }
    let recorder = RecordingTransport(base: transport)
    var configuration = DeepLinkClient.Configuration()
    configuration.transport = recorder
    // A throwaway folder: resolving stores nothing worth keeping.
    configuration.store = FileStore(
        directory: FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-\(UUID().uuidString)"))
    configuration.allowedDestinationSchemes = ["https", "http"]
    let client = DeepLinkClient(backend: backend, configuration: configuration)
    do {
        let link = try await client.resolve(url)
        printJSON(Resolution(link: link, requests: recorder.requests))
        await client.shutdown()
        return 0
    } catch {
        FileHandle.standardError.write(Data("linkrelay: \(error)\n".utf8))
        await client.shutdown()
        return 1
    }
}

func parse(_ options: Options) -> Int32 {
    guard let text = options.positional.first else { fail("give the link to parse.") }
    do {
        printJSON(try LinkParser.parse(text).deepLink(provider: .local, resolution: .local(.onDevice)))
        return 0
    } catch {
        FileHandle.standardError.write(Data("linkrelay: \(error)\n".utf8))
        return 1
    }
}

let arguments = ProcessInfo.processInfo.arguments.dropFirst()
guard let command = arguments.first else { fail("name a command.") }
let options: Options
do {
    options = try Options(arguments.dropFirst())
} catch {
    fail("\(error)")
}
if options.flags.contains("help") {
    print(usage)
    exit(0)
}
let status: Int32 =
    switch command {
    case "doctor": await doctor(options)
    case "resolve": await resolve(options)
    case "parse": parse(options)
    default: fail("unknown command '\(command)'.")
    }
exit(status)
