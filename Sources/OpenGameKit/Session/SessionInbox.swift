import Synchronization

/// Lets channel handlers reach their ``GKSession`` without keeping it alive (set once the session exists).
final class SessionInbox: Sendable {
    private struct Reference {
        weak var session: GKSession?
    }

    private let reference = Mutex(Reference())

    /// The session, once initialized; `nil` after it is released.
    var session: GKSession? {
        get { reference.withLock { $0.session } }
        set { reference.withLock { $0.session = newValue } }
    }
}
