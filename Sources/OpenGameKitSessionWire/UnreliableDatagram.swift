import Foundation
import GameCenterProtocol
import NIOCore

/// The clear header of one unreliable message's UDP datagram, which seals and opens the rest.
///
/// A datagram is a 20-byte header — `"OGK"`, the version byte, the receiver's datagram id for the connection (8
/// bytes) and the sender's counter (8 bytes), both big-endian — then the message (at most
/// ``SessionLimits/maxUnreliableMessage`` bytes) encrypted with ChaCha20-Poly1305 and the 16-byte tag. The header is
/// the additional authenticated data and the nonce is four zero bytes and the counter. Each direction of a connection
/// has its own key (see `SessionKeys`); its counter starts at 1 and grows by one with every datagram.
package struct UnreliableDatagram: Equatable, Sendable {
    /// The bytes every datagram starts with.
    package static let magic: [UInt8] = Array("OGK".utf8) + [SessionLimits.protocolVersion]
    /// The clear header's size: magic, receiver id and counter.
    package static let headerLength = magic.count + 16
    /// The largest datagram: the header, the largest message and the tag.
    package static let maxLength = length(payloadCount: SessionLimits.maxUnreliableMessage)

    private static let magicValue = magic.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }

    /// The receiving side's datagram id for the connection.
    package var receiverID: UInt64
    /// The sender's counter for this datagram, its nonce.
    package var counter: UInt64

    /// A header.
    package init(receiverID: UInt64, counter: UInt64) {
        self.receiverID = receiverID
        self.counter = counter
    }

    /// Reads the clear header of `datagram`, not yet authenticated; `nil` for anything that cannot be a datagram
    /// (another magic, shorter than the header and a tag, or longer than ``maxLength``).
    package init?(header datagram: ByteBuffer) {
        guard datagram.readableBytes >= Self.length(payloadCount: 0), datagram.readableBytes <= Self.maxLength,
            datagram.getInteger(at: datagram.readerIndex, as: UInt32.self) == Self.magicValue,
            let receiverID = datagram.getInteger(at: datagram.readerIndex + 4, as: UInt64.self),
            let counter = datagram.getInteger(at: datagram.readerIndex + 12, as: UInt64.self)
        else { return nil }
        self.receiverID = receiverID
        self.counter = counter
    }

    /// The size of the datagram carrying `payloadCount` bytes.
    package static func length(payloadCount: Int) -> Int {
        headerLength + payloadCount + ChaChaPolyCipher.tagSize
    }

    /// Writes the datagram with this header carrying `payload`, sealed with `cipher`, to the start of `bytes`, which
    /// holds at least `length(payloadCount: payload.count)` bytes.
    package func seal(_ payload: Data, with cipher: ChaChaPolyCipher, into bytes: UnsafeMutableRawBufferPointer) {
        precondition(bytes.count >= Self.length(payloadCount: payload.count))
        bytes.storeBytes(of: Self.magicValue.bigEndian, as: UInt32.self)
        bytes.storeBytes(of: receiverID.bigEndian, toByteOffset: 4, as: UInt64.self)
        bytes.storeBytes(of: counter.bigEndian, toByteOffset: 12, as: UInt64.self)
        let body = UnsafeMutableRawBufferPointer(rebasing: bytes[Self.headerLength...])
        payload.copyBytes(to: body)
        cipher.seal(body, count: payload.count, counter: counter, authenticating: UnsafeRawBufferPointer(rebasing: bytes[..<Self.headerLength]))
    }

    /// The message of `datagram`, whose header this is, decrypted; `nil` if it does not authenticate with `cipher`.
    package func open(_ datagram: ByteBuffer, with cipher: ChaChaPolyCipher) -> Data? {
        guard datagram.readableBytes >= Self.length(payloadCount: 0) else { return nil }
        var payload = Data(count: datagram.readableBytes - Self.length(payloadCount: 0))
        let opened = payload.withUnsafeMutableBytes { output in
            datagram.withUnsafeReadableBytes { bytes in
                cipher.open(
                    UnsafeRawBufferPointer(rebasing: bytes[Self.headerLength...]), into: output, counter: counter,
                    authenticating: UnsafeRawBufferPointer(rebasing: bytes[..<Self.headerLength]))
            }
        }
        return opened ? payload : nil
    }
}
