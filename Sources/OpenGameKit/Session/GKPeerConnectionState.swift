/// The state of another peer as seen by a ``GKSession``, reported through ``GKSessionDelegate``.
public enum GKPeerConnectionState: Sendable {
    /// The peer advertises a session with the same session id and can be connected to.
    case available
    /// The peer stopped advertising (or went away) before a connection was made.
    case unavailable
    /// The peer is connected to this session; data can be exchanged.
    case connected
    /// The peer's connection ended.
    case disconnected
    /// A connection to or from the peer is being set up.
    case connecting
}
