import NIOCore

/// What a reliable message carries in front of its payload through the relay of a match whose members may reach
/// each other directly: the sender's stream and, for each recipient, the message's number in the sender's messages
/// to that recipient. A recipient puts the messages of both paths back in that order and drops the copies that
/// came both ways.
///
/// On the wire, at the start of the relayed payload: stream u64, entry count u8, each entry (member index u8,
/// number u64); the game's payload follows.
public struct PeerEnvelope: Sendable, Equatable {
    /// The sender's stream (``PeerOffer/stream``).
    public var stream: UInt64
    /// Each recipient's member index and the message's number for it.
    public var numbers: [(index: UInt8, number: UInt64)]

    /// Creates an envelope; encoding traps on more than 255 entries.
    public init(stream: UInt64, numbers: [(index: UInt8, number: UInt64)]) {
        self.stream = stream
        self.numbers = numbers
    }

    /// The number for the member `index`; nil when the message was not numbered for it (it joined later).
    public func number(for index: UInt8) -> UInt64? {
        numbers.first { $0.index == index }?.number
    }

    /// Appends the envelope.
    public func write(to buffer: inout ByteBuffer) {
        precondition(numbers.count <= Int(UInt8.max), "more than 255 envelope entries")
        buffer.writeInteger(stream)
        buffer.writeInteger(UInt8(numbers.count))
        for (index, number) in numbers {
            buffer.writeInteger(index)
            buffer.writeInteger(number)
        }
    }

    /// Reads the envelope at the start of `payload`, leaving the game's payload readable.
    public static func read(from payload: inout ByteBuffer) throws(RelayWireError) -> PeerEnvelope {
        let stream = try payload.readRelayInteger(as: UInt64.self)
        let count = Int(try payload.readRelayInteger(as: UInt8.self))
        var numbers: [(index: UInt8, number: UInt64)] = []
        numbers.reserveCapacity(count)
        for _ in 0..<count {
            let index = try payload.readRelayInteger(as: UInt8.self)
            numbers.append((index, try payload.readRelayInteger(as: UInt64.self)))
        }
        return PeerEnvelope(stream: stream, numbers: numbers)
    }

    /// Envelopes are equal when their streams and entries are.
    public static func == (lhs: PeerEnvelope, rhs: PeerEnvelope) -> Bool {
        lhs.stream == rhs.stream && lhs.numbers.elementsEqual(rhs.numbers) { $0.index == $1.index && $0.number == $1.number }
    }
}
