/// The session behind an authenticated request.
struct AuthenticatedSession: Sendable {
    var sessionID: String
    var playerID: String
    var expiresAt: Int64
}
