/// Lets channel handlers reach their ``GKSession`` without keeping it alive (set once the session exists).
final class SessionInbox: @unchecked Sendable {
    /// The session, once initialized; `nil` after it is released.
    weak var session: GKSession?
}
