import Foundation
import Hummingbird
import Logging
import NIOCore

/// How the server listens and what it trusts.
public struct ServerConfiguration: Sendable {
    /// The address to listen on. Default `127.0.0.1`.
    public var host: String
    /// The port; 0 for any free port. Default 8080.
    public var port: Int
    /// Whether `X-Forwarded-For` names the client (behind a proxy you run; on loopback in
    /// tests). Off by default: a client could otherwise claim any address.
    public var trustProxy: Bool

    /// A configuration; see each property.
    public init(host: String = "127.0.0.1", port: Int = 8080, trustProxy: Bool = false) {
        self.host = host
        self.port = port
        self.trustProxy = trustProxy
    }
}

/// The server: its routes over a store.
public enum ServerApplication {
    /// The protocol version the SDK endpoints speak, as `GET /api/sdk/v1/health` reports it.
    public static let apiVersion = "v1"

    /// The router with every route, over `store`.
    public static func router(
        store: any ServerStore, configuration: ServerConfiguration = ServerConfiguration(), clock: @escaping @Sendable () -> Date = Date.init
    ) -> Router<ServerContext> {
        let router = Router(context: ServerContext.self)
        router.get("api/sdk/v1/health") { _, _ -> Health in
            Health(status: "healthy", version: apiVersion, timestamp: Self.timestamp(clock()))
        }
        let links = LinkRoutes(store: store, configuration: configuration, clock: clock)
        // One parameter name per position: the router's tree needs the first segment named the
        // same in both forms (a short code alone, or a template slug before the code).
        router.get("api/sdk/v1/resolve/:first") { request, context in
            try await links.resolve(request, context, code: context.parameters.require("first"), templateSlug: nil)
        }
        router.get("api/sdk/v1/resolve/:first/:second") { request, context in
            try await links.resolve(
                request, context, code: context.parameters.require("second"), templateSlug: context.parameters.require("first"))
        }
        return router
    }

    /// A JSON response (keys sorted, slashes unescaped).
    static func json<Body: Encodable>(_ body: Body, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(body)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The application on `configuration`'s address.
    public static func application(
        store: any ServerStore, configuration: ServerConfiguration, logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(store: store, configuration: configuration),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "LinkRelay Server"),
            onServerRunning: onServerRunning,
            logger: logger)
    }

    /// `2026-03-01T10:15:30.123Z`: ISO 8601 with milliseconds, as LinkForty's server writes dates.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

/// `GET /api/sdk/v1/health`: `{"status":"healthy","version":"v1","timestamp":"…"}`.
struct Health: ResponseEncodable, Decodable {
    var status: String
    var version: String
    var timestamp: String
}
