import OpenGameKitSessionWire

extension DenyReason {
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
