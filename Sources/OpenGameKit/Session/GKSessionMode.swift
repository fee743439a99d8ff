/// How a ``GKSession`` takes part in discovery (Game Kit Programming Guide, "Peer-to-Peer Connectivity").
public enum GKSessionMode: Sendable {
    /// Advertises the session so clients and peers can find it; does not look for others.
    case server
    /// Looks for servers (and peers) with the same session id; does not advertise.
    case client
    /// Advertises and looks for others at the same time.
    case peer
}
