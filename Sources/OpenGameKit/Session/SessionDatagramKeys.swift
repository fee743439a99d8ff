/// A connection's unreliable-datagram state once its keys are agreed: how this side seals what it sends to the peer
/// and opens what the peer sends.
struct SessionDatagramKeys: Sendable {
    /// Seals this side's datagrams to the peer.
    var sealer: DatagramSealer
    /// Opens the peer's datagrams to this side.
    var opener: DatagramOpener
}
