import NIOCore

/// The first frame on a relay connection.
///
/// Tells the device how to reach the relay over UDP, which key seals its datagrams, where its reliable stream
/// resumes, the timing and rate limits it must keep, and who is in the match. Layout after the type byte:
/// connectionID u64, key 32 bytes, udpHost (u16 length + UTF-8), udpPort u16, memberIndex u8, acceptedSeq u64,
/// receiverStream u64, heartbeatMillis u32, timeoutMillis u32, maxMessagesPerSecond u32, burstMessages u32, member
/// count u8, each member, then flags u8 (bit 0: peer to peer).
public struct RelayWelcome: Sendable, Equatable {
    /// Names this connection in the clear header of its UDP datagrams.
    public var connectionID: UInt64
    /// The key that seals and opens this connection's datagrams.
    public var key: RelayKey
    /// The relay's UDP host, at most 255 UTF-8 bytes; "" means the host of the HTTP URL the device used.
    public var udpHost: String
    /// The relay's UDP port.
    public var udpPort: UInt16
    /// The receiving device's own member index.
    public var memberIndex: UInt8
    /// The last reliable seq the server accepted from this member: resend everything after it.
    public var acceptedSeq: UInt64
    /// Names the numbering of the reliable messages sent to this member; a device that reconnects with another
    /// stream's `received` count starts counting again (the relay restarted).
    public var receiverStream: UInt64
    /// How often the device must send something (a heartbeat if nothing else), in milliseconds.
    public var heartbeatMillis: UInt32
    /// How long the server waits without hearing from the device before it closes the connection, in milliseconds.
    public var timeoutMillis: UInt32
    /// The member's send rate limit, reliable and unreliable messages together.
    public var maxMessagesPerSecond: UInt32
    /// How many messages the member may send in one burst above the rate.
    public var burstMessages: UInt32
    /// Every member of the match, the receiver included; at most 255.
    public var members: [RelayMember]
    /// Whether members may reach each other directly (false: the game's manifest makes its matches relay-only, and
    /// the relay passes on no ``PeerOffer``).
    public var peerToPeer: Bool

    /// Creates a welcome; encoding traps unless `udpHost` is at most 255 UTF-8 bytes and there are at most 255 members.
    public init(
        connectionID: UInt64,
        key: RelayKey,
        udpHost: String,
        udpPort: UInt16,
        memberIndex: UInt8,
        acceptedSeq: UInt64,
        receiverStream: UInt64,
        heartbeatMillis: UInt32,
        timeoutMillis: UInt32,
        maxMessagesPerSecond: UInt32,
        burstMessages: UInt32,
        members: [RelayMember],
        peerToPeer: Bool = true
    ) {
        self.connectionID = connectionID
        self.key = key
        self.udpHost = udpHost
        self.udpPort = udpPort
        self.memberIndex = memberIndex
        self.acceptedSeq = acceptedSeq
        self.receiverStream = receiverStream
        self.heartbeatMillis = heartbeatMillis
        self.timeoutMillis = timeoutMillis
        self.maxMessagesPerSecond = maxMessagesPerSecond
        self.burstMessages = burstMessages
        self.members = members
        self.peerToPeer = peerToPeer
    }

    /// Appends the welcome body (everything after the type byte).
    func write(to buffer: inout ByteBuffer) {
        precondition(udpHost.utf8.count <= Int(UInt8.max), "relay UDP host longer than 255 UTF-8 bytes")
        precondition(members.count <= Int(UInt8.max), "more than 255 relay members")
        buffer.writeInteger(connectionID)
        _ = key.symmetricKey.withUnsafeBytes { buffer.writeBytes($0) }
        buffer.writeRelayMessage(udpHost)
        buffer.writeInteger(udpPort)
        buffer.writeInteger(memberIndex)
        buffer.writeInteger(acceptedSeq)
        buffer.writeInteger(receiverStream)
        buffer.writeInteger(heartbeatMillis)
        buffer.writeInteger(timeoutMillis)
        buffer.writeInteger(maxMessagesPerSecond)
        buffer.writeInteger(burstMessages)
        buffer.writeInteger(UInt8(members.count))
        for member in members {
            member.write(to: &buffer)
        }
        buffer.writeInteger(UInt8(peerToPeer ? 1 : 0))
    }

    /// Reads a welcome body laid out as `write(to:)` writes it.
    static func read(from buffer: inout ByteBuffer) throws(RelayWireError) -> RelayWelcome {
        let connectionID = try buffer.readRelayInteger(as: UInt64.self)
        guard let keyBytes = buffer.readSlice(length: 32) else { throw .truncated }
        // A 32-byte slice always makes a key.
        let key = RelayKey(bytes: keyBytes.readableBytesView)!
        let hostByteCount = try Int(buffer.readRelayInteger(as: UInt16.self))
        guard hostByteCount <= Int(UInt8.max) else { throw .invalidValue("UDP host longer than 255 bytes") }
        let udpHost = try buffer.readRelayString(byteCount: hostByteCount)
        let udpPort = try buffer.readRelayInteger(as: UInt16.self)
        let memberIndex = try buffer.readRelayInteger(as: UInt8.self)
        let acceptedSeq = try buffer.readRelayInteger(as: UInt64.self)
        let receiverStream = try buffer.readRelayInteger(as: UInt64.self)
        let heartbeatMillis = try buffer.readRelayInteger(as: UInt32.self)
        let timeoutMillis = try buffer.readRelayInteger(as: UInt32.self)
        let maxMessagesPerSecond = try buffer.readRelayInteger(as: UInt32.self)
        let burstMessages = try buffer.readRelayInteger(as: UInt32.self)
        let memberCount = try Int(buffer.readRelayInteger(as: UInt8.self))
        var members: [RelayMember] = []
        members.reserveCapacity(memberCount)
        for _ in 0..<memberCount {
            members.append(try RelayMember.read(from: &buffer))
        }
        let flags = try buffer.readRelayInteger(as: UInt8.self)
        guard flags <= 1 else { throw .invalidValue("welcome flags \(flags)") }
        return RelayWelcome(
            connectionID: connectionID,
            key: key,
            udpHost: udpHost,
            udpPort: udpPort,
            memberIndex: memberIndex,
            acceptedSeq: acceptedSeq,
            receiverStream: receiverStream,
            heartbeatMillis: heartbeatMillis,
            timeoutMillis: timeoutMillis,
            maxMessagesPerSecond: maxMessagesPerSecond,
            burstMessages: burstMessages,
            members: members,
            peerToPeer: flags & 1 != 0
        )
    }
}
