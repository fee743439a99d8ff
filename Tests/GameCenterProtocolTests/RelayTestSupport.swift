import GameCenterProtocol
import NIOCore
import NetworkFaultProxy

/// The shared SplitMix64 (from NetworkFaultProxy), with a fast way to draw many bytes, so random tests replay exactly.
struct SeededGenerator: RandomNumberGenerator {
    private var base: SplitMix64

    init(seed: UInt64) {
        base = SplitMix64(seed: seed)
    }

    mutating func next() -> UInt64 {
        base.next()
    }

    /// Eight bytes per draw: the fuzz test needs millions, and a draw per byte is slow in debug builds.
    mutating func bytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            var word = next()
            for _ in 0..<min(8, count - bytes.count) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return bytes
    }
}

func encoded(_ frame: RelayServerFrame) -> ByteBuffer {
    var buffer = ByteBuffer()
    frame.write(to: &buffer)
    return buffer
}

func encoded(_ frame: RelayClientFrame) -> ByteBuffer {
    var buffer = ByteBuffer()
    frame.write(to: &buffer)
    return buffer
}

func pattern(_ count: Int) -> ByteBuffer {
    ByteBuffer(bytes: (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
}

/// A fixed key, so golden bytes stay stable.
let fixedKey = RelayKey(bytes: (0..<32).map { UInt8($0) })!

func welcome(members: [RelayMember], udpHost: String = "relay.example.org") -> RelayWelcome {
    RelayWelcome(
        connectionID: 0x0102_0304_0506_0708,
        key: fixedKey,
        udpHost: udpHost,
        udpPort: 7777,
        memberIndex: 1,
        acceptedSeq: 41,
        receiverStream: 99,
        heartbeatMillis: 5000,
        timeoutMillis: 15000,
        maxMessagesPerSecond: 60,
        burstMessages: 600,
        members: members
    )
}

let smallMembers = [
    RelayMember(index: 0, playerID: "G:alice", state: .connected),
    RelayMember(index: 1, playerID: "玩家🎮", state: .expected),
    RelayMember(index: 2, playerID: "Zoë", state: .left),
]

/// 255 members with unicode ids, the last one exactly 255 UTF-8 bytes long.
let manyMembers: [RelayMember] = (0..<255).map { index in
    let id = index == 254 ? String(repeating: "é", count: 127) + "x" : "p\(index)-ß✓"
    return RelayMember(index: UInt8(index), playerID: id, state: RelayMemberState(rawValue: UInt8(index % 3))!)
}

/// Every server frame case, with the payload sizes the round-trip and truncation tests need.
let serverFrames: [RelayServerFrame] = [
    .welcome(welcome(members: smallMembers)),
    .welcome(welcome(members: [], udpHost: "")),
    .welcome(welcome(members: manyMembers, udpHost: String(repeating: "h", count: 255))),
    .memberState(RelayMember(index: 7, playerID: "G:bob", state: .connected)),
    .memberState(RelayMember(index: 255, playerID: "🙂", state: .left)),
    .reliable(seq: 1, sender: 0, payload: pattern(100)),
    .reliable(seq: .max, sender: 255, payload: ByteBuffer()),
    .unreliable(sender: 3, payload: pattern(1000)),
    .unreliable(sender: 0, payload: ByteBuffer()),
    .ack(0),
    .ack(.max),
    .heartbeat,
    .error(code: 17, message: "rate limit exceeded ⚠️"),
    .error(code: .max, message: ""),
    .closing(.matchEnded, message: "bye"),
    .closing(.timedOut, message: ""),
    .closing(.tooSlow, message: "slow"),
    .closing(.flooding, message: "flood"),
    .closing(.left, message: "left"),
    .closing(.replaced, message: "replaced"),
    .closing(.protocolError, message: String(repeating: "ü", count: 1000)),
    .voiceChannel(member: 3, membership: .listening, channel: "team"),
    .voiceChannel(member: 255, membership: .none, channel: String(repeating: "é", count: 16)),
    .voiceChannel(member: 0, membership: .joined, channel: "a"),
    .voice(sender: 2, channel: "team", payload: pattern(80)),
    .voice(sender: 0, channel: "🙂", payload: ByteBuffer()),
    .peerOffer(sender: 2, sampleOffer),
    .peerOffer(sender: 0, PeerOffer(stream: 1, publicKey: [UInt8](repeating: 9, count: 32), candidates: [])),
]

/// An offer with an IPv4 and an IPv6 candidate.
let sampleOffer = PeerOffer(
    stream: 0xAB,
    publicKey: (0..<32).map { UInt8($0 + 100) },
    candidates: [
        PeerCandidate(address: [192, 168, 1, 20], port: 4000)!,
        PeerCandidate(address: [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1], port: 65_535)!,
    ])

/// Every client frame case, with the payload sizes the round-trip and truncation tests need.
let clientFrames: [RelayClientFrame] = [
    .reliable(seq: 1, recipients: [], payload: pattern(64)),
    .reliable(seq: .max, recipients: [1, 1, 3], payload: ByteBuffer()),
    .reliable(seq: 9, recipients: (0...254).map { UInt8($0) }, payload: pattern(10)),
    .unreliable(recipients: [], payload: ByteBuffer()),
    .unreliable(recipients: [2, 0, 2], payload: pattern(1000)),
    .ack(0),
    .ack(123_456_789),
    .heartbeat,
    .leave,
    .voiceChannel(membership: .joined, channel: "team"),
    .voiceChannel(membership: .none, channel: String(repeating: "x", count: 32)),
    .voice(channel: "team", payload: pattern(512)),
    .voice(channel: "a", payload: ByteBuffer()),
    .peerOffer(sampleOffer),
]
