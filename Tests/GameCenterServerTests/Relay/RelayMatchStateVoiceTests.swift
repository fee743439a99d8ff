@testable import GameCenterServer
import GameCenterProtocol
import NIOCore
import Testing

/// The relay's voice rules without I/O: channel membership told to everyone, voice forwarded only to the members
/// receiving its channel, refusals, limits.
@Suite struct RelayMatchStateVoiceTests {
    typealias Fixture = RelayMatchStateTests.Fixture

    /// Every frame waiting for `member`, decoded.
    static func frames(_ match: inout Fixture, _ member: UInt8) -> [RelayServerFrame] {
        guard case .frames(let frames) = match.state.takeOutgoing(member, connectionID: match.connections[Int(member)]) else { return [] }
        return frames.compactMap { try? RelayServerFrame.read(from: $0) }
    }

    static func voice(in frames: [RelayServerFrame]) -> [(sender: UInt8, channel: String, payload: String)] {
        frames.compactMap { if case .voice(let sender, let channel, let payload) = $0 { (sender, channel, String(buffer: payload)) } else { nil } }
    }

    static func set(_ match: inout Fixture, _ member: UInt8, _ channel: String, _ membership: VoiceChannelMembership) {
        _ = match.state.setVoiceChannel(member, connectionID: match.connections[Int(member)], channel: channel, membership: membership, now: match.now)
    }

    static func talk(_ match: inout Fixture, _ member: UInt8, _ channel: String, _ text: String, datagrams: DatagramOutbox = DatagramOutbox())
        -> RelayMatchState.Effects
    {
        Array(text.utf8).withUnsafeBytes { payload in
            match.state.receiveVoice(from: member, channel: channel, payload: payload, now: match.now, statistics: match.statistics, datagrams: datagrams)
        }
    }

    @Test func voiceReachesOnlyTheMembersReceivingItsChannel() {
        var match = Fixture(players: 4)
        Self.set(&match, 0, "team", .joined)
        Self.set(&match, 1, "team", .listening)
        Self.set(&match, 2, "team", .joined)
        Self.set(&match, 3, "other", .listening)
        for member: UInt8 in 0...3 { _ = Self.frames(&match, member) }

        _ = Self.talk(&match, 0, "team", "hello")
        #expect(Self.voice(in: Self.frames(&match, 1)).map { "\($0.sender) \($0.channel) \($0.payload)" } == ["0 team hello"])
        #expect(Self.voice(in: Self.frames(&match, 2)).isEmpty, "a member who stopped the channel still got its voice")
        #expect(Self.voice(in: Self.frames(&match, 3)).isEmpty, "a member of another channel got the voice")
        #expect(Self.voice(in: Self.frames(&match, 0)).isEmpty, "the speaker heard itself")
        let counters = match.statistics.snapshot()
        #expect(counters["voiceForwarded"] == 1)
        #expect(counters["voiceWithheld"] == 1)

        // Starting again: the member receives once more.
        Self.set(&match, 2, "team", .listening)
        _ = Self.talk(&match, 0, "team", "again")
        #expect(Self.voice(in: Self.frames(&match, 2)).map(\.payload) == ["again"])
    }

    @Test func aSenderOutsideTheChannelIsNotForwarded() {
        var match = Fixture(players: 2)
        Self.set(&match, 1, "team", .listening)
        _ = Self.frames(&match, 1)
        _ = Self.talk(&match, 0, "team", "sneaky")
        #expect(Self.voice(in: Self.frames(&match, 1)).isEmpty)
        #expect(match.statistics.snapshot()["voiceRefused"] == 1)
    }

    @Test func membershipIsToldToTheOthersAndToEveryNewConnection() {
        var match = Fixture(players: 3)
        for member: UInt8 in 0...2 { _ = Self.frames(&match, member) }
        Self.set(&match, 0, "team", .listening)
        Self.set(&match, 0, "team", .listening)
        #expect(Self.frames(&match, 1) == [.voiceChannel(member: 0, membership: .listening, channel: "team")], "told once, not for a repeat")
        #expect(Self.frames(&match, 0).isEmpty, "the member itself is not told")

        // Member 2 reconnects: the welcome's companions say where member 0 stands.
        _ = match.state.attach(
            2, connectionID: 555, key: RelayKey.random(), wake: Fixture.wake(), receiverStream: 0, received: 0,
            senderStream: 1, now: match.now)
        match.connections[2] = 555
        #expect(Self.frames(&match, 2).contains(.voiceChannel(member: 0, membership: .listening, channel: "team")))

        // Leaving the channel is told; leaving the match takes the member out of every channel.
        Self.set(&match, 0, "team", .none)
        #expect(Self.frames(&match, 1) == [.voiceChannel(member: 0, membership: .none, channel: "team")])
        Self.set(&match, 1, "team", .listening)
        _ = match.state.remove(1, reason: .left, message: "bye", store: false)
        #expect(match.state.voiceChannelFrames(except: 0).isEmpty)
    }

    @Test func parentalControlsKeepAnUnderageMemberOutOfVoice() {
        var match = Fixture(players: 2)
        _ = match.state.attach(
            1, connectionID: 777, key: RelayKey.random(), wake: Fixture.wake(), receiverStream: 0, received: 0,
            senderStream: 1, voiceAllowed: false, now: match.now)
        match.connections[1] = 777
        _ = Self.frames(&match, 0)
        _ = Self.frames(&match, 1)
        Self.set(&match, 1, "team", .listening)
        let told = Self.frames(&match, 1)
        #expect(
            told.contains {
                if case .error(let code, let message) = $0 {
                    code == UInt16(ErrorCode.parentalControlsBlocked.rawValue) && message.contains("parental")
                } else {
                    false
                }
            })
        #expect(Self.frames(&match, 0).isEmpty, "a refused join was told to the others")
        _ = Self.talk(&match, 1, "team", "hi")
        #expect(match.statistics.snapshot()["voiceRefused"] == 1)
    }

    @Test func aNinthChannelIsRefusedWithAnError() {
        var match = Fixture(players: 2)
        for channel in 0..<VoiceLimits.maximumChannelsPerMember { Self.set(&match, 0, "c\(channel)", .joined) }
        _ = Self.frames(&match, 0)
        _ = Self.frames(&match, 1)
        Self.set(&match, 0, "one too many", .joined)
        #expect(Self.frames(&match, 0).contains { if case .error(let code, _) = $0 { code == UInt16(ErrorCode.invalidParameter.rawValue) } else { false } })
        #expect(Self.frames(&match, 1).isEmpty)
    }

    @Test func aVoiceFlooderIsTakenOutLikeADataFlooder() {
        var limits = RelayLimits()
        limits.voicePacketsPerSecond = 10
        limits.voiceBurstPackets = 20
        var match = Fixture(players: 2, limits: limits)
        Self.set(&match, 0, "team", .joined)
        Self.set(&match, 1, "team", .listening)
        var effects = RelayMatchState.Effects()
        for _ in 0..<21 { effects.append(Self.talk(&match, 0, "team", "x")) }
        #expect(effects.departed.map(\.reason) == [.flooding])
        #expect(Self.voice(in: Self.frames(&match, 1)).count == 20)
        #expect(match.statistics.snapshot()["membersFlooding"] == 1)
    }

    @Test func voiceGoesByUDPToAReceiverWithAnAddress() throws {
        var match = Fixture(players: 2)
        let address = try #require(DatagramAddress(try SocketAddress(ipAddress: "127.0.0.1", port: 4100)))
        let accepted = match.state.acceptDatagram(1, connectionID: match.connections[1], counter: 1, from: address, now: match.now)
        #expect(accepted)
        Self.set(&match, 0, "team", .joined)
        Self.set(&match, 1, "team", .listening)
        let datagrams = DatagramOutbox()
        _ = Self.talk(&match, 0, "team", "over udp", datagrams: datagrams)
        #expect(datagrams.count == 1)
        let (header, body) = try RelayDatagram.open(ByteBuffer(bytes: datagrams.datagram(0).bytes), key: match.keys[1])
        #expect(header.kind == .serverVoice)
        let parsed = body.withUnsafeReadableBytes {
            RelayDatagram.readServerVoiceBody($0).map { ($0.sender, $0.channel, String(decoding: $0.payload, as: UTF8.self)) }
        }
        #expect(parsed?.0 == 0 && parsed?.1 == "team" && parsed?.2 == "over udp")
    }
}
