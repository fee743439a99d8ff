import GameCenterProtocol
import OpenGameKitSessionWire

/// Seals the unreliable messages this side sends to one connected peer: the peer's datagram id, and this
/// direction's key and counter.
struct DatagramSealer: Sendable {
    /// This direction's key.
    let cipher: ChaChaPolyCipher
    /// The peer's datagram id for the connection.
    let receiverID: UInt64
    /// The last counter used; 0 before the first datagram.
    private(set) var counter: UInt64 = 0

    /// A sealer for datagrams to `receiverID` under `cipher`.
    init(cipher: ChaChaPolyCipher, receiverID: UInt64) {
        self.cipher = cipher
        self.receiverID = receiverID
    }

    /// The header of the next datagram (counter 1, 2…); `nil` once the counter has reached its last value, as a
    /// nonce is never reused (nothing more is sent: 2⁶⁴ − 1 datagrams is more than any game sends).
    mutating func nextHeader() -> UnreliableDatagram? {
        guard counter < .max else { return nil }
        counter += 1
        return UnreliableDatagram(receiverID: receiverID, counter: counter)
    }
}
