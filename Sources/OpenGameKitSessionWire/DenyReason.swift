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
}
