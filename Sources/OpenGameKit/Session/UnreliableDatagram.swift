import Foundation
import NIOCore

/// One unreliable message as a UDP datagram: `"OGK"`, a version byte, the receiver's ``ConnectionToken``,
/// then the message (at most ``SessionLimits/maxUnreliableMessage`` bytes).
package struct UnreliableDatagram: Equatable, Sendable {
    /// The bytes every datagram starts with.
    static let magic: [UInt8] = Array("OGK".utf8) + [SessionLimits.protocolVersion]
    /// The header size: magic and token.
    static let headerLength = magic.count + ConnectionToken.length

    private static let magicValue = magic.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }

    /// The token the receiver handed out for this connection.
    var token: ConnectionToken
    /// The message.
    var payload: Data

    /// The datagram's size in bytes.
    var encodedLength: Int { Self.headerLength + payload.count }

    /// The datagram's bytes.
    package func encoded() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: encodedLength) { bytes, count in
            write(to: UnsafeMutableRawBufferPointer(bytes))
            count = encodedLength
        }
    }

    /// Writes the datagram's bytes to the start of `bytes`, which holds at least ``encodedLength`` bytes.
    func write(to bytes: UnsafeMutableRawBufferPointer) {
        precondition(bytes.count >= encodedLength)
        bytes.storeBytes(of: Self.magicValue.bigEndian, as: UInt32.self)
        token.write(to: UnsafeMutableRawBufferPointer(rebasing: bytes[Self.magic.count...]))
        payload.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: bytes[Self.headerLength...]))
    }

    /// Parses a datagram; `nil` for anything that is not one (wrong magic, short, or an oversized message).
    init?(buffer: ByteBuffer) {
        var buffer = buffer
        guard buffer.readableBytes >= Self.headerLength, buffer.readableBytes - Self.headerLength <= SessionLimits.maxUnreliableMessage,
            buffer.readInteger(as: UInt32.self) == Self.magicValue,
            let token = ConnectionToken(reading: &buffer)
        else { return nil }
        self.token = token
        self.payload = Data(buffer.readableBytesView)
    }

    /// Parses a datagram; `nil` for anything that is not one.
    package init?(bytes: [UInt8]) {
        self.init(buffer: ByteBuffer(bytes: bytes))
    }

    /// Creates a datagram.
    init(token: ConnectionToken, payload: Data) {
        self.token = token
        self.payload = payload
    }
}
