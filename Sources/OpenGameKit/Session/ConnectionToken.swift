/// A random 128-bit secret one side of a connection gives the other in the handshake; the other side puts it
/// in every unreliable datagram it sends, which proves the datagram comes from the connected peer.
struct ConnectionToken: Hashable, Sendable, CustomStringConvertible {
    /// The token's length in bytes.
    static let length = 16

    /// The 16 bytes.
    let bytes: [UInt8]

    /// Wraps exactly 16 bytes; `nil` for any other count.
    init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        self.bytes = bytes
    }

    /// A token drawn from `generator`.
    static func random(using generator: inout some RandomNumberGenerator) -> ConnectionToken {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        for _ in 0..<length { bytes.append(UInt8.random(in: .min ... .max, using: &generator)) }
        return ConnectionToken(unchecked: bytes)
    }

    /// A token from the system's secure generator.
    static func random() -> ConnectionToken {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    private init(unchecked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Hex digits, for logs.
    var description: String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
}
