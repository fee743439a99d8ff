import NIOCore

/// A member's place in a match's relay.
///
/// Travels as one byte; any other byte value is rejected with `RelayWireError.invalidValue`.
public enum RelayMemberState: UInt8, Sendable {
    /// Joined the match but has not connected to the relay yet.
    case expected = 0
    /// Has a live relay connection.
    case connected = 1
    /// Left the match for good; its index is never reused.
    case left = 2
}

/// One member of a relayed match as the relay announces it.
///
/// On the wire: index u8, state u8, player id length u8, player id UTF-8 bytes.
public struct RelayMember: Sendable, Equatable {
    /// The member's index, stable for the whole match: join order, 0-based. Recipient lists and senders use it.
    public var index: UInt8
    /// The member's player id: 1 to 255 UTF-8 bytes. Encoding any other length is a programming error and traps.
    public var playerID: String
    /// Where the member stands in the relay.
    public var state: RelayMemberState

    /// Creates a member; `playerID` must be 1 to 255 UTF-8 bytes for the member to be encodable.
    public init(index: UInt8, playerID: String, state: RelayMemberState) {
        self.index = index
        self.playerID = playerID
        self.state = state
    }

    /// Appends index, state, id length and id.
    func write(to buffer: inout ByteBuffer) {
        let idByteCount = playerID.utf8.count
        precondition((1...Int(UInt8.max)).contains(idByteCount), "relay player id must be 1 to 255 UTF-8 bytes")
        buffer.writeInteger(index)
        buffer.writeInteger(state.rawValue)
        buffer.writeInteger(UInt8(idByteCount))
        buffer.writeString(playerID)
    }

    /// Reads one member laid out as `write(to:)` writes it.
    static func read(from buffer: inout ByteBuffer) throws(RelayWireError) -> RelayMember {
        let index = try buffer.readRelayInteger(as: UInt8.self)
        let stateByte = try buffer.readRelayInteger(as: UInt8.self)
        guard let state = RelayMemberState(rawValue: stateByte) else {
            throw .invalidValue("member state \(stateByte)")
        }
        let idByteCount = try Int(buffer.readRelayInteger(as: UInt8.self))
        guard idByteCount > 0 else { throw .invalidValue("empty player id") }
        let playerID = try buffer.readRelayString(byteCount: idByteCount)
        return RelayMember(index: index, playerID: playerID, state: state)
    }
}
