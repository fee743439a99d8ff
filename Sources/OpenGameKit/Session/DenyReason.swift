/// Why a peer refused a connection request (carried in the deny frame).
package enum DenyReason: UInt8, Sendable, Equatable {
    /// The user declined.
    case declined = 0
    /// The peer already has the maximum number of connected peers.
    case full = 1
    /// Both peers asked at once; the one with the smaller peer id keeps its request (this one is dropped).
    case collision = 2
    /// The peer is already connected or already has a request from this peer.
    case busy = 3

    /// The error the requester reports for this reason.
    func error(peerName: String) -> GKSessionError {
        switch self {
        case .declined: GKSessionError(.declined, "\(peerName) declined the connection.")
        case .full: GKSessionError(.sessionFull, "\(peerName) already has the maximum of \(SessionLimits.maxConnectedPeers) connected peers.")
        case .collision: GKSessionError(.cancelled, "\(peerName) asked to connect at the same time; its request is used instead.")
        case .busy: GKSessionError(.communicationsFailure, "\(peerName) is already connected or connecting to this peer.")
        }
    }
}
