import Foundation
import LinkRelay
import LinkRelayWire

/// Scripts a running `linkrelay-sandbox` over its admin API: the same calls as a ``Sandbox`` in
/// process, so a test or a demo can target either.
///
/// ```swift
/// let sandbox = SandboxAdminClient(baseURL: URL(string: "http://127.0.0.1:8642")!)
/// try await sandbox.createLink(SandboxAPI.LinkFortyLink(shortCode: "spring", deepLinkPath: "/sale"))
/// try await sandbox.recordWebClick(.init(url: URL(string: "https://go.sandbox.test/spring")!, device: phone), on: .linkForty)
/// ```
///
/// Every call throws a ``/LinkRelay/DeepLinkError``: `.network` when the sandbox cannot be reached,
/// `.server(status:)` with the sandbox's message when it refuses a call, `.decoding` for an
/// answer it cannot read.
public struct SandboxAdminClient: SandboxControl {
    /// The sandbox's address (`http://127.0.0.1:8642`).
    public let baseURL: URL
    /// The transport calls go through.
    public let transport: any HTTPTransport

    /// A client of the sandbox at `baseURL`, calling it through `transport`.
    public init(baseURL: URL, transport: any HTTPTransport = URLSessionTransport()) {
        self.baseURL = baseURL
        self.transport = transport
    }

    public func describe() async throws -> SandboxAPI.Description {
        try await call(.get, "", answer: SandboxAPI.Description.self)
    }

    public func createLink<Link: SandboxAdminLink>(_ link: Link) async throws {
        try await call(.post, "/\(Link.sandboxProvider.rawValue)/links", body: link)
    }

    public func recordWebClick(_ click: SandboxAPI.WebClick, on provider: SandboxProvider) async throws {
        try await call(.post, "/\(provider.rawValue)/clicks", body: click)
    }

    public func receivedEvents(_ provider: SandboxProvider) async throws -> [SandboxAPI.ReceivedEvent] {
        try await call(.get, "/\(provider.rawValue)/events", answer: [SandboxAPI.ReceivedEvent].self)
    }

    public func setFault(_ rule: SandboxAPI.FaultRule) async throws {
        try await call(.put, "/faults", body: rule)
    }

    public func clearFaults() async throws {
        try await call(.delete, "/faults")
    }

    public func setClientIP(_ ip: String) async throws {
        try await call(.put, "/client-ip", body: SandboxAPI.ClientIP(ip: ip))
    }

    public func receivedRequests() async throws -> [HTTPRequest] {
        try await call(.get, "/requests", answer: [HTTPRequest].self)
    }

    // MARK: Calls

    @discardableResult
    private func call(_ method: HTTPMethod, _ path: String, body: (any Encodable)? = nil) async throws -> HTTPResponse {
        let text = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        guard let url = URL(string: text + "/_admin" + path) else {
            throw DeepLinkError(.invalidConfiguration, "The sandbox's base URL \(baseURL.absoluteString) cannot take a path.")
        }
        var request = HTTPRequest(method: method, url: url, headers: ["Accept": "application/json"])
        if let body {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            request.body = try encoder.encode(body)
            request.headers["Content-Type"] = "application/json"
        }
        let response = try await transport.send(request)
        guard response.isSuccess else {
            let message = (try? JSONDecoder().decode(SandboxAPI.Failure.self, from: response.body))?.error ?? "no message"
            throw DeepLinkError(
                .server(status: response.status), "The sandbox refused \(method) /_admin\(path): \(message)", status: response.status)
        }
        return response
    }

    private func call<Answer: Decodable>(_ method: HTTPMethod, _ path: String, answer: Answer.Type) async throws -> Answer {
        let response = try await call(method, path)
        do {
            return try JSONDecoder().decode(answer, from: response.body)
        } catch {
            throw DeepLinkError(.decoding, "The sandbox's answer to \(method) /_admin\(path) is not a \(answer).", underlying: error)
        }
    }
}
