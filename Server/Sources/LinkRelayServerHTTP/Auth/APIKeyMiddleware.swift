import Hummingbird
import LinkRelayServerCore
import LinkRelayServerStorage

/// The API key on every request of a group of routes: `Authorization: Bearer lr_…`, known, not
/// revoked, of one of ``scopes``, put on the context (``ServerContext/apiKey``) before the route
/// runs. A route registered on the group cannot forget it. A missing, unknown, wrong or revoked
/// key is the same 401, so a caller learns nothing about which keys exist; a valid key whose
/// scope does not allow the call is a 403.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = ServerContext

    let store: any KeyStore
    let scopes: Set<KeyScope>

    func handle(
        _ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.apiKey = try await Self.key(of: request, store: store, scopes: scopes)
        return try await next(request, context)
    }

    static func key(of request: Request, store: any KeyStore, scopes: Set<KeyScope>) async throws -> APIKeyRecord {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { throw APIError.unauthorized }
        let secret = String(header.dropFirst("Bearer ".count)).trimmingCharacters(in: .whitespaces)
        switch try await store.check(secret: secret, scopes: scopes) {
        case .valid(let key): return key
        case .outOfScope(let key):
            throw APIError(.forbidden, "This key's scope (\(key.scope.rawValue)) does not allow this call; it needs an admin key.")
        case .refused: throw APIError.unauthorized
        }
    }
}

extension ServerContext {
    /// The request's API key, which ``APIKeyMiddleware`` checked; a route outside such a group
    /// has none, and asking is a 401.
    func requireAPIKey() throws -> APIKeyRecord {
        guard let apiKey else { throw APIError.unauthorized }
        return apiKey
    }
}
