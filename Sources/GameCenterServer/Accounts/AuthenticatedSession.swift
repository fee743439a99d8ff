/// The session behind an authenticated request.
package struct AuthenticatedSession: Sendable {
    package var sessionID: String
    package var playerID: String
    package var expiresAt: Int64

    /// A session as authentication found it.
    package init(sessionID: String, playerID: String, expiresAt: Int64) {
        self.sessionID = sessionID
        self.playerID = playerID
        self.expiresAt = expiresAt
    }
}
