import Foundation
import GameCenterProtocol
import NIOCore
import OpenGameKitSessionWire

/// Opens the unreliable messages one connected peer sends to this side: this side's datagram id, the direction's
/// key, and a replay window over the counters.
struct DatagramOpener: Sendable {
    /// The peer's direction's key.
    let cipher: ChaChaPolyCipher
    /// This side's datagram id for the connection.
    let receiverID: UInt64
    private var replay = ReplayWindow()

    /// An opener for datagrams to `receiverID` under `cipher`.
    init(cipher: ChaChaPolyCipher, receiverID: UInt64) {
        self.cipher = cipher
        self.receiverID = receiverID
    }

    /// The message of `datagram` (whose header is `header`) if it authenticates and its counter was never seen and
    /// is not more than 1023 behind the highest seen; `nil` if forged, altered, truncated, replayed or too old.
    mutating func open(_ datagram: ByteBuffer, header: UnreliableDatagram) -> Data? {
        guard let payload = header.open(datagram, with: cipher), replay.accept(header.counter) else { return nil }
        return payload
    }
}
