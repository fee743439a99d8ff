import NIOCore

/// A random 128-bit secret one side of a connection gives the other in the handshake; the other side puts it
/// in every unreliable datagram it sends, which proves the datagram comes from the connected peer.
///
/// Stored as two integers so that matching a datagram's token allocates nothing.
package struct ConnectionToken: Hashable, Sendable, CustomStringConvertible {
    /// The token's length in bytes.
    static let length = 16

    private let high: UInt64
    private let low: UInt64

    /// The 16 bytes, most significant first (as on the wire).
    var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) } + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// Wraps exactly 16 bytes; `nil` for any other count.
    init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads 16 bytes from `buffer`; `nil` (and nothing read) if fewer are readable.
    init?(reading buffer: inout ByteBuffer) {
        guard buffer.readableBytes >= Self.length,
            let high = buffer.readInteger(as: UInt64.self), let low = buffer.readInteger(as: UInt64.self)
        else { return nil }
        self.high = high
        self.low = low
    }

    private init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Appends the 16 bytes to `buffer`.
    func write(to buffer: inout ByteBuffer) {
        buffer.writeInteger(high)
        buffer.writeInteger(low)
    }

    /// Writes the 16 bytes to the start of `bytes`, which holds at least 16.
    func write(to bytes: UnsafeMutableRawBufferPointer) {
        precondition(bytes.count >= Self.length)
        bytes.storeBytes(of: high.bigEndian, as: UInt64.self)
        bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
    }

    /// A token drawn from `generator`.
    static func random(using generator: inout some RandomNumberGenerator) -> ConnectionToken {
        ConnectionToken(high: generator.next(), low: generator.next())
    }

    /// A token from the system's secure generator.
    static func random() -> ConnectionToken {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// Hex digits, for logs.
    package var description: String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
