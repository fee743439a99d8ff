import Foundation

/// Something ``SessionCore`` reports to the session's delegate or data handler.
enum SessionEvent: Equatable, Sendable {
    /// A peer's state changed.
    case stateChanged(peerID: String, GKPeerConnectionState)
    /// A peer asks to connect.
    case connectionRequest(peerID: String)
    /// A connection this session asked for failed.
    case connectionFailed(peerID: String, GKSessionError)
    /// A message arrived from a connected peer.
    case received(Data, from: String)
}
