import Foundation

/// Where the server keeps the dashboard's signed-in browsers. One of the stores ``ServerStore`` is
/// made of (the SQL engines implement every one); a part of the server that needs only this takes
/// only this.
package protocol SessionStore: Sendable {
    /// Stores a signed-in browser's session.
    func insertSession(_ session: DashboardSession) async throws

    /// The session whose token hashes to `hash`, if it has not expired at `now` and its key is
    /// not revoked.
    func session(hash: String, at now: Date) async throws -> DashboardSession?

    /// Ends the session whose token hashes to `hash` (signing out).
    func deleteSession(hash: String) async throws

    /// Deletes the sessions that expired before `cutoff`; how many.
    func deleteSessions(expiredBefore cutoff: Date) async throws -> Int
}

package struct DashboardSession: Sendable, Hashable {
    /// The SHA-256 of the cookie's token (the token itself is never stored).
    package var tokenHash: String
    package var projectID: String
    /// The admin key it signed in with: revoking it ends the session.
    package var keyID: String
    /// The token every form of the session carries (cross-site request forgery).
    package var csrfToken: String
    package var createdAt: Date
    package var expiresAt: Date

    /// A session; see each property.
    package init(tokenHash: String, projectID: String, keyID: String, csrfToken: String, createdAt: Date, expiresAt: Date) {
        self.tokenHash = tokenHash
        self.projectID = projectID
        self.keyID = keyID
        self.csrfToken = csrfToken
        self.createdAt = createdAt.storedPrecision
        self.expiresAt = expiresAt.storedPrecision
    }
}
