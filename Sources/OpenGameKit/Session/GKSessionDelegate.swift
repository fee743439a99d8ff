import Foundation

/// Receives a ``GKSession``'s peer state changes, connection requests and failures, on the session's
/// ``GKSession/delegateQueue``. Every method has a default implementation that does nothing.
public protocol GKSessionDelegate: AnyObject, Sendable {
    /// A peer's state changed (available, unavailable, connecting, connected or disconnected).
    func session(_ session: GKSession, peer peerID: String, didChange state: GKPeerConnectionState)
    /// A peer asks to connect; answer with ``GKSession/acceptConnection(fromPeer:)`` or ``GKSession/denyConnection(fromPeer:)``.
    func session(_ session: GKSession, didReceiveConnectionRequestFromPeer peerID: String)
    /// A connection this session asked for failed: declined, timed out, unreachable or refused.
    func session(_ session: GKSession, connectionWithPeerFailed peerID: String, withError error: any Error)
    /// The session itself failed (for example, discovery could not start).
    func session(_ session: GKSession, didFailWithError error: any Error)
}

extension GKSessionDelegate {
    /// Does nothing.
    public func session(_ session: GKSession, peer peerID: String, didChange state: GKPeerConnectionState) {}
    /// Does nothing; the request stays pending until the requester cancels or gives up.
    public func session(_ session: GKSession, didReceiveConnectionRequestFromPeer peerID: String) {}
    /// Does nothing.
    public func session(_ session: GKSession, connectionWithPeerFailed peerID: String, withError error: any Error) {}
    /// Does nothing.
    public func session(_ session: GKSession, didFailWithError error: any Error) {}
}

/// Receives a ``GKSession``'s messages, given to ``GKSession/setDataReceiveHandler(_:withContext:)`` (the seed's
/// `receiveData:fromPeer:inSession:context:` object); called on the session's ``GKSession/delegateQueue``.
public protocol GKSessionDataReceiver: AnyObject, Sendable {
    /// A connected peer sent `data`; `context` is what the game gave with this receiver.
    func receiveData(_ data: Data, fromPeer peer: String, inSession session: GKSession, context: (any Sendable)?)
}
