/// One unreliable message as a UDP datagram: `"OGK"`, a version byte, the receiver's ``ConnectionToken``,
/// then the message (at most ``SessionLimits/maxUnreliableMessage`` bytes).
struct UnreliableDatagram: Equatable, Sendable {
    /// The bytes every datagram starts with.
    static let magic: [UInt8] = Array("OGK".utf8) + [SessionLimits.protocolVersion]
    /// The header size: magic and token.
    static let headerLength = magic.count + ConnectionToken.length

    /// The token the receiver handed out for this connection.
    var token: ConnectionToken
    /// The message.
    var payload: [UInt8]

    /// The datagram's bytes.
    func encoded() -> [UInt8] {
        Self.magic + token.bytes + payload
    }

    /// Parses a datagram; `nil` for anything that is not one (wrong magic, short, or an oversized message).
    init?(bytes: [UInt8]) {
        guard bytes.count >= Self.headerLength, bytes.count - Self.headerLength <= SessionLimits.maxUnreliableMessage,
              Array(bytes.prefix(Self.magic.count)) == Self.magic,
              let token = ConnectionToken(bytes: Array(bytes[Self.magic.count..<Self.headerLength])) else { return nil }
        self.token = token
        self.payload = Array(bytes[Self.headerLength...])
    }

    /// Creates a datagram.
    init(token: ConnectionToken, payload: [UInt8]) {
        self.token = token
        self.payload = payload
    }
}
