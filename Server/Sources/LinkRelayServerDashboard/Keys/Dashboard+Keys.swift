import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage

/// The dashboard's keys: create one with a scope (its secret shown once, on the answer to the
/// form, never again), list them by prefix, revoke one.
extension Dashboard {
    struct KeysView {
        let chrome: Chrome
        let created: Created?
        let problem: String?
        let keys: [Row]
        let destinations: Destinations

        /// Where SDK-key links may go (``DestinationHosts``).
        struct Destinations {
            let learned: Bool
            let listed: Bool
            let any: Bool
            let hosts: String
            let problem: String?
        }

        struct Created {
            let scope: String
            let name: String
            let secret: String
        }

        struct Row {
            let id: String
            let prefix: String
            let scope: String
            let name: String
            let created: String
            let status: String
            let active: Bool
            let current: Bool
        }
    }

    func keysPage(_ context: ServerContext) async throws -> Response {
        let session = try context.requireSession()
        return try await keysView(session, created: nil, problem: nil)
    }

    private func keysView(
        _ session: DashboardSession, created: KeysView.Created?, problem: String?, destinationProblem: String? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let keys = try await store.keys(project: session.projectID)
        let destinations = try await store.destinationHosts(project: session.projectID)
        return pages.page(
            "keys",
            KeysView(
                chrome: Chrome(title: "API keys", csrf: session.csrfToken, section: "keys"), created: created, problem: problem,
                keys: keys.reversed().map { key in
                    KeysView.Row(
                        id: key.id, prefix: key.prefix, scope: key.scope.rawValue, name: key.name,
                        created: ServerHTTP.timestamp(key.createdAt),
                        status: key.revokedAt == nil ? "active" : "revoked", active: key.revokedAt == nil, current: key.id == session.keyID)
                },
                destinations: KeysView.Destinations(
                    learned: destinations.mode == .learned, listed: destinations.mode == .listed, any: destinations.mode == .any,
                    hosts: destinations.hosts.joined(separator: "\n"), problem: destinationProblem)),
            status: status)
    }

    /// Makes a key; the answer shows its secret once (no redirect: it is never in a URL, a
    /// history entry or the database).
    func createKey(_ request: Request, _ context: ServerContext) async throws -> Response {
        let (session, form) = try await checkedForm(request, context)
        guard let name = form["name"], TextLimit.fits(name, characters: APIKeys.maxNameLength) else {
            return try await keysView(session, created: nil, problem: "A key needs a name of at most 100 characters.", status: .badRequest)
        }
        guard let scope = form["scope"].flatMap(KeyScope.init(rawValue:)) else {
            return try await keysView(session, created: nil, problem: "The scope must be sdk or admin.", status: .badRequest)
        }
        let issued = APIKeys.issue(project: session.projectID, scope: scope, name: name, at: clock.currentDate)
        try await store.insertKey(issued.record)
        return try await keysView(
            session, created: KeysView.Created(scope: scope.rawValue, name: name, secret: issued.secret), problem: nil)
    }

    /// Sets where SDK-key links may go: the form's `mode` and its `hosts` (one per line, or
    /// separated by commas or spaces), through the same checks as `PUT /api/destination-hosts`.
    func setDestinations(_ request: Request, _ context: ServerContext) async throws -> Response {
        let (session, form) = try await checkedForm(request, context)
        // (`isWhitespace`: a browser sends "\r\n", one Character in Swift, equal to neither "\r" nor "\n".)
        let hosts = (form["hosts"] ?? "").split(whereSeparator: { $0.isWhitespace || $0 == "," }).map(String.init)
        do {
            try await store.setDestinationHosts(project: session.projectID, DestinationHosts.requested(mode: form["mode"], hosts: hosts))
        } catch let error as LinkFieldError {
            return try await keysView(
                session, created: nil, problem: nil, destinationProblem: APIError(error).message, status: .badRequest)
        }
        return Self.redirect(DashboardPath.keys)
    }

    /// Revokes a key of the project at once (the one this session signed in with too: the
    /// session ends with it).
    func revokeKey(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let (session, _) = try await checkedForm(request, context)
        guard try await store.keys(project: session.projectID).contains(where: { $0.id == id }) else {
            throw DashboardError(.notFound, "There is no such key in this project.")
        }
        _ = try await store.revokeKey(id: id, at: clock.currentDate)
        return Self.redirect(id == session.keyID ? DashboardPath.signIn : DashboardPath.keys)
    }
}
