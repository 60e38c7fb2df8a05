import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelayTesting

/// What is fuzzed, and what must hold for every input.
///
/// - ``linkParser``: the input, as text, through `LinkParser.parse` (as a string and, when
///   Foundation accepts it, as a `URL`).
/// - The adapters: the input is a server's answer. The first byte picks the call (resolve one of
///   two links the adapter claims, or the install match), the second the HTTP status, and the
///   rest is the body, returned for every request the adapter makes.
///
/// For every input: no crash, no hang, no unbounded memory (libFuzzer's limits); a failure is
/// a ``DeepLinkError`` (never another error type) whose description does not contain the API
/// key; and a result encodes to JSON, as the client persists it.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case linkParser = "linkparser"
    case linkForty = "linkforty"
    case limeLink = "limelink"
    case dynalinks
    case paylisher

    /// The target named by `LINKRELAY_FUZZ_TARGET`.
    public static var fromEnvironment: FuzzTarget {
        let name = ProcessInfo.processInfo.environment["LINKRELAY_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name.lowercased()) else {
            let names = allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("Set LINKRELAY_FUZZ_TARGET to one of: \(names).\n".utf8))
            exit(64)
        }
        return target
    }

    /// The statuses the second byte of an adapter input picks from.
    static let statuses = [200, 201, 204, 400, 401, 403, 404, 409, 410, 422, 429, 500, 502, 503, 302, 299]

    /// The API key every adapter is configured with; it must never show in an error.
    static let apiKey = "fuzz_secret_key_7f3a9c"

    /// Runs one input; traps when a property does not hold.
    public func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        run(Data(buffer: bytes))
    }

    /// Runs one input, blocking the calling thread (libFuzzer's, never a Swift concurrency
    /// thread); traps when a property does not hold.
    public func run(_ input: Data) {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await run(input)
            done.signal()
        }
        done.wait()
    }

    /// Runs one input; traps when a property does not hold.
    public func run(_ input: Data) async {
        if self == .linkParser {
            Self.parse(input)
            return
        }
        let operation = input.first ?? 0
        let status = Self.statuses[Int(input.dropFirst().first ?? 0) % Self.statuses.count]
        let body = Data(input.dropFirst(2))
        await Self.adapters[self]?.exercise(operation: operation, status: status, body: body)
    }

    /// Runs each file once (a plain build's replay mode).
    public func replay(_ paths: some Sequence<String>) {
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("Cannot read \(path)\n".utf8))
                exit(66)
            }
            run(data)
            print("\(rawValue): \(path) ok")
        }
    }

    // MARK: - The parser

    private static func parse(_ input: Data) {
        let text = String(decoding: input, as: UTF8.self)
        check { _ = try LinkParser.parse(text) }
        if let url = URL(string: text) {
            check {
                let parsed = try LinkParser.parse(url)
                _ = parsed.path
                _ = parsed.queryItems
            }
        }
    }

    // MARK: - The adapters

    /// Each adapter, built once: backends keep no state between calls (that lives in each
    /// input's fresh context), so every input need not pay for a configuration.
    private static let adapters: [FuzzTarget: Adapter] = Dictionary(
        uniqueKeysWithValues: allCases.compactMap { target in target.makeAdapter().map { (target, $0) } })

    private func makeAdapter() -> Adapter? {
        do {
            switch self {
            case .linkParser:
                return nil
            case .linkForty:
                let configuration = try LinkFortyBackend.Configuration(
                    baseURL: URL(string: "https://go.acme.app")!, apiKey: Self.apiKey, appSchemes: ["acme"])
                return Adapter(
                    backend: LinkFortyBackend(configuration),
                    links: [URL(string: "https://go.acme.app/Xk9_2bQz")!, URL(string: "https://go.acme.app/k3m9x2qa/Xk9_2bQz?ref=a")!])
            case .limeLink:
                let configuration = try LimeLinkBackend.Configuration(apiKey: Self.apiKey, appSchemes: ["acme"])
                return Adapter(
                    backend: LimeLinkBackend(configuration),
                    links: [
                        URL(string: "https://shop.limelink.org/link/summer")!,
                        URL(string: "https://limelink.org/universal-link/abc?ref=a%2Bb")!,
                    ])
            case .dynalinks:
                let configuration = try DynalinksBackend.Configuration(
                    apiKey: Self.apiKey, linkDomains: ["acme.dynalinks.app"], appSchemes: ["acme"])
                return Adapter(
                    backend: DynalinksBackend(configuration),
                    links: [URL(string: "https://acme.dynalinks.app/promo")!, URL(string: "https://acme.dynalinks.app/p/42?utm_source=x")!])
            case .paylisher:
                let configuration = try PaylisherBackend.Configuration(apiKey: Self.apiKey, appSchemes: ["diyetim"])
                return Adapter(
                    backend: PaylisherBackend(configuration),
                    links: [URL(string: "https://link.paylisher.com/SUMMER")!, URL(string: "diyetim://products/42?keyName=SUMMER")!])
            }
        } catch {
            preconditionFailure("The \(rawValue) configuration is invalid: \(error)")
        }
    }
}

/// One adapter with the links it claims.
struct Adapter: Sendable {
    let backend: any DeepLinkBackend
    let links: [URL]

    func exercise(operation: UInt8, status: Int, body: Data) async {
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        if status == 429 || status == 503 { headers["Retry-After"] = String(operation) }
        if status == 302 { headers["Location"] = "https://elsewhere.example/x" }
        let context = BackendContext(
            transport: ReplayTransport(status: status, headers: headers, body: body), clock: ManualClock(),
            device: StaticDeviceInfo.iPhone, storage: BackendStorage(store: InMemoryStore()), installID: "fuzz-install")
        switch operation % 3 {
        case 0, 1:
            let link = links[Int(operation % 3)]
            precondition(backend.canHandle(link), "\(backend.id) does not claim \(link)")
            await check { try Self.encodes(await backend.resolve(link, context: context)) }
        default:
            await check { try Self.encodes(await backend.matchInstall(context: context)) }
        }
    }

    /// The client persists what a backend returns (a pending link, the install record): it
    /// must encode.
    static func encodes(_ value: some Encodable) throws {
        do {
            _ = try JSONEncoder().encode(value)
        } catch {
            preconditionFailure("A decoded result does not encode: \(error)")
        }
    }
}

/// Answers every request with the same response.
struct ReplayTransport: HTTPTransport {
    let status: Int
    let headers: HTTPHeaders
    let body: Data

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: body)
    }
}

/// Runs `body`; a thrown error must be a `DeepLinkError` that does not reveal the API key.
func check(_ body: () throws -> Void) {
    do {
        try body()
    } catch {
        checkError(error)
    }
}

/// Runs `body`; a thrown error must be a `DeepLinkError` that does not reveal the API key.
func check(_ body: () async throws -> Void) async {
    do {
        try await body()
    } catch {
        checkError(error)
    }
}

private func checkError(_ error: any Error) {
    guard let error = error as? DeepLinkError else {
        preconditionFailure("An untyped error escaped: \(type(of: error)): \(error)")
    }
    precondition(!String(describing: error).contains(FuzzTarget.apiKey), "An error reveals the API key: \(error)")
}
