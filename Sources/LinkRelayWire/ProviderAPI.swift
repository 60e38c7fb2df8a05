import Foundation
@_spi(Backend) import LinkRelay

/// A provider's HTTP API as every adapter calls it: one place that encodes a request body, sends
/// it, turns an answer that is not a success into the provider's typed error, and decodes a body
/// into a typed payload or a `.decoding` error that names the call and the status.
///
/// ```swift
/// let api = ProviderAPI(backend: .linkForty, name: "LinkForty") { response, what, url, now in
///     LinkFortyMapping.error(for: response, what, url: url, now: now)
/// }
/// let data = try await api.fetch(LinkFortyLinkData.self, request, "the resolve request", url: url, context: context)
/// ```
package struct ProviderAPI: Sendable {
    /// The provider's error for an answer outside the accepted statuses, for the call named
    /// `what` (`"the resolve request"`), about the link `url` when there is one.
    package typealias Failure = @Sendable (_ response: HTTPResponse, _ what: String, _ url: URL?, _ now: Date) -> DeepLinkError

    package let backend: BackendID
    /// The provider's name in messages: `LinkForty`.
    package let name: String
    private let failure: Failure

    /// - Parameter failure: the provider's error for an answer that is not accepted. Default:
    ///   ``defaultFailure(for:_:url:now:)``.
    package init(backend: BackendID, name: String, failure: Failure? = nil) {
        self.backend = backend
        self.name = name
        self.failure =
            failure ?? { [name] response, what, url, now in
                ProviderAPI.defaultFailure(name: name, backend: backend, for: response, what, url: url, now: now)
            }
    }

    /// `<name> answered <status> to <what>.`, with the body's `error` or `message` (at most 200
    /// characters) when it has one, classified by the status (`Retry-After` kept).
    package static func defaultFailure(
        name: String, backend: BackendID, for response: HTTPResponse, _ what: String, url: URL?, now: Date
    ) -> DeepLinkError {
        let text = ProviderErrorBody.text(in: response.body).map { " \($0.prefix(200))" } ?? ""
        return response.serverError("\(name) answered \(response.status) to \(what).\(text)", backend: backend, url: url, now: now)
    }

    /// `body` as JSON; a body that cannot be encoded is `.invalidArgument`.
    package func encode<Body: Encodable>(_ body: Body) throws -> Data {
        do {
            return try JSONEncoder().encode(body)
        } catch {
            throw DeepLinkError(.invalidArgument, "The request could not be encoded as JSON.", backend: backend, underlying: error)
        }
    }

    /// Every status: for a call whose body is read whatever the status.
    package static let anyStatus = Int.min...Int.max

    /// Sends `request`; an answer whose status is not in `accepted` (any 2xx by default) throws
    /// the provider's error, or `otherwise`'s for this call.
    package func send(
        _ request: HTTPRequest, _ what: String, url: URL? = nil, accepting accepted: ClosedRange<Int> = 200...299,
        otherwise: Failure? = nil, context: BackendContext
    ) async throws -> HTTPResponse {
        let response = try await context.transport.send(request)
        guard accepted.contains(response.status) else {
            throw (otherwise ?? failure)(response, what, url, context.clock.currentDate)
        }
        return response
    }

    /// `response`'s body as `Payload`; a body that does not decode is `.decoding`, with the
    /// status. A `DeepLinkError` the payload's decoding throws itself is passed on as it is.
    package func decode<Payload: Decodable>(
        _ type: Payload.Type, from response: HTTPResponse, _ what: String, url: URL? = nil
    ) throws -> Payload {
        do {
            return try WireJSON.decode(Payload.self, from: response.body)
        } catch {
            throw decodingError(what, status: response.status, url: url, underlying: error)
        }
    }

    /// The `.decoding` error for an answer to `what` that could not be read.
    package func decodingError(_ what: String, status: Int, url: URL? = nil, underlying: any Error) -> DeepLinkError {
        DeepLinkError(
            .decoding, "\(name)'s answer to \(what) could not be read.", backend: backend, status: status, url: url, underlying: underlying)
    }

    /// ``send(_:_:url:accepting:otherwise:context:)``, then ``decode(_:from:_:url:)``.
    package func fetch<Payload: Decodable>(
        _ type: Payload.Type, _ request: HTTPRequest, _ what: String, url: URL? = nil, accepting accepted: ClosedRange<Int> = 200...299,
        otherwise: Failure? = nil, context: BackendContext
    ) async throws -> Payload {
        let response = try await send(request, what, url: url, accepting: accepted, otherwise: otherwise, context: context)
        return try decode(Payload.self, from: response, what, url: url)
    }
}
