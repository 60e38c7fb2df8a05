import Foundation
import Hummingbird
import LinkRelayServerCore
import LinkRelayServerStorage
import NIOCore

/// Each request's context: the connection's peer, for the client's address.
package struct ServerContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The connection's peer (the client, or the proxy in front of the server).
    package let remoteAddress: SocketAddress?
    /// The client's address as the server's configuration reads it (the peer, or
    /// `X-Forwarded-For` behind a trusted proxy; ``ClientAddress``): worked out once per request
    /// by the outermost middleware, for the routes, the click limit and the access log alike.
    package var clientAddress: String?
    /// The request's API key, checked by ``APIKeyMiddleware`` on the routes that need one.
    package var apiKey: APIKeyRecord?
    /// The dashboard's signed-in session, checked by ``DashboardSessionMiddleware`` on its pages.
    package var dashboardSession: DashboardSession?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
    /// Names the route that answers (`/{templateSlug}/{code}`) for the access log and the
    /// metrics, where the router's own pattern cannot (it needs one name for a first segment
    /// that is a code in one route and a template's slug in another).
    func name(route: String) {
        coreContext.endpointPath.value = route
    }
}

/// An error answered as JSON, `{"error": "…"}`, with its status: never a stack trace, SQL or a
/// key.
package struct APIError: HTTPResponseError, Sendable {
    package let status: HTTPResponse.Status
    /// The sentence the client reads.
    package let message: String
    /// The request field at fault, for a `400`.
    package let field: String?
    /// Headers the answer carries besides its JSON (`Allow` on a `405`).
    package var headers: HTTPFields = [:]

    /// An error with `status` saying `message`, about `field` when given.
    package init(_ status: HTTPResponse.Status, _ message: String, field: String? = nil) {
        self.status = status
        self.message = message
        self.field = field
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = ErrorAnswer(error: message, field: field).response(status: status)
        response.headers.append(contentsOf: headers)
        return response
    }

    /// 401: no key, an unknown or revoked one, or one whose scope does not allow the call.
    static let unauthorized = APIError(.unauthorized, "A valid API key is required in the Authorization header.")
    /// 404 for a link: unknown, inactive, expired, or another project's.
    static let linkNotFound = APIError(.notFound, "Link not found")
}
