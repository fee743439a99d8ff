import Foundation
import GameCenterProtocol
import NIOCore
import Testing
@testable import OpenGameKit

/// `MatchRelayState` on its own, without sockets: what it queues, writes, resends, drops and refuses.
@Suite struct MatchRelayStateTests {
    // MARK: Fixture

    /// The local player is "a" (index 0); "b" and "c" are the other members.
    static let players = ["a", "b", "c"]

    static func members(_ states: [RelayMemberState] = [.connected, .connected, .connected]) -> [RelayMember] {
        zip(players, states).enumerated().map { RelayMember(index: UInt8($0.offset), playerID: $0.element.0, state: $0.element.1) }
    }

    static func welcome(
        connectionID: UInt64 = 1, acceptedSeq: UInt64 = 0, receiverStream: UInt64 = 77,
        rate: UInt32 = 1_000, burst: UInt32 = 5_000, members: [RelayMember] = members(), peerToPeer: Bool = false
    ) -> RelayWelcome {
        RelayWelcome(
            connectionID: connectionID, key: .random(), udpHost: "", udpPort: 0, memberIndex: 0, acceptedSeq: acceptedSeq,
            receiverStream: receiverStream, heartbeatMillis: 1_000, timeoutMillis: 10_000,
            maxMessagesPerSecond: rate, burstMessages: burst, members: members, peerToPeer: peerToPeer)
    }

    static func wake() -> WriterWake {
        let (_, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        return WriterWake(continuation)
    }

    static func state() -> MatchRelayState {
        MatchRelayState(matchID: "m", localPlayerID: "a", knownPlayers: players)
    }

    /// A state welcomed on connection `connectionID`.
    static func connected(_ welcome: RelayWelcome = welcome()) -> MatchRelayState {
        var state = state()
        _ = state.welcomed(welcome, wake: wake(), now: 0)
        return state
    }

    static func payload(_ text: String) -> Data { Data(text.utf8) }

    /// The frames the connection would write next, decoded.
    static func outgoing(_ state: inout MatchRelayState) throws -> [RelayClientFrame] {
        try state.takeOutgoing().map { try RelayClientFrame.read(from: $0) }
    }

    /// The reliable frames among `frames`, as (seq, recipients, payload text).
    static func reliable(_ frames: [RelayClientFrame]) -> [(seq: UInt64, recipients: [UInt8], text: String)] {
        frames.compactMap {
            guard case .reliable(let seq, let recipients, let payload) = $0 else { return nil }
            return (seq, recipients, String(buffer: payload))
        }
    }

    /// `received(seq:)`, callable inside `#expect` (which cannot call a mutating method itself).
    static func receive(_ state: inout MatchRelayState, _ seq: UInt64) -> Bool {
        state.received(seq: seq)
    }

    static func code(of body: () throws -> Void) -> GKError.Code? {
        do {
            try body()
            return nil
        } catch let error as GKError {
            return error.code
        } catch {
            return .unknown
        }
    }

    // MARK: Sending reliably

    @Test func reliableMessagesWaitForTheWelcomeThenGoOutOnceInOrder() throws {
        var state = Self.state()
        for text in ["one", "two", "three"] {
            let outbound = try state.queue(Self.payload(text), to: nil, reliable: true, now: 0)
            #expect(outbound.wake == nil && outbound.datagram == nil && outbound.direct.isEmpty, "no connection yet: nobody to wake")
        }
        #expect(try Self.outgoing(&state).isEmpty, "nothing is written before the relay welcomed a connection")
        #expect(state.pending.count == 3)

        _ = state.welcomed(Self.welcome(), wake: Self.wake(), now: 0)
        let sent = Self.reliable(try Self.outgoing(&state))
        #expect(sent.map(\.seq) == [1, 2, 3])
        #expect(sent.map(\.text) == ["one", "two", "three"])
        #expect(sent.allSatisfy { $0.recipients.isEmpty }, "nil recipients: everyone")
        #expect(try Self.outgoing(&state).isEmpty, "a message is written once per connection")

        _ = try state.queue(Self.payload("four"), to: ["c"], reliable: true, now: 0)
        let next = Self.reliable(try Self.outgoing(&state))
        #expect(next.map(\.seq) == [4])
        #expect(next.first?.recipients == [2], "recipients travel as relay indices")
    }

    @Test func queueingWakesTheConnectionsWriter() throws {
        var state = Self.state()
        let wake = Self.wake()
        _ = state.welcomed(Self.welcome(), wake: wake, now: 0)
        let woken = try state.queue(Self.payload("x"), to: nil, reliable: true, now: 0).wake
        #expect(woken === wake, "a reliable message should ask for the writer")
    }

    @Test func acknowledgementsFreeTheSendBuffer() throws {
        var state = Self.connected()
        for text in ["aa", "bbb", "cccc"] { _ = try state.queue(Self.payload(text), to: nil, reliable: true, now: 0) }
        _ = try Self.outgoing(&state)
        #expect(state.pendingBytes == 9)

        state.acknowledge(through: 2)
        #expect(state.pending.map(\.seq) == [3])
        #expect(state.pendingBytes == 4)

        // What was written and is still unacknowledged is not written again; what comes next is written once.
        _ = try state.queue(Self.payload("d"), to: nil, reliable: true, now: 0)
        #expect(Self.reliable(try Self.outgoing(&state)).map(\.seq) == [4])

        state.acknowledge(through: 2)
        #expect(state.pending.map(\.seq) == [3, 4], "an old acknowledgement changes nothing")
        state.acknowledge(through: 10)
        #expect(state.pending.isEmpty)
        #expect(state.pendingBytes == 0)
        #expect(try Self.outgoing(&state).isEmpty)
    }

    @Test func aReconnectResendsWhatTheRelayDoesNotHaveWithTheSameNumbers() throws {
        var state = Self.connected()
        for text in ["one", "two", "three"] { _ = try state.queue(Self.payload(text), to: ["b"], reliable: true, now: 0) }
        #expect(Self.reliable(try Self.outgoing(&state)).map(\.seq) == [1, 2, 3])

        // The connection breaks (the client drops it), and the relay says it holds message 1.
        state.connection = nil
        _ = try state.queue(Self.payload("four"), to: nil, reliable: true, now: 0)
        #expect(try Self.outgoing(&state).isEmpty, "nothing is written without a connection")
        _ = state.welcomed(Self.welcome(connectionID: 2, acceptedSeq: 1), wake: Self.wake(), now: 1)

        let resent = Self.reliable(try Self.outgoing(&state))
        #expect(resent.map(\.seq) == [2, 3, 4])
        #expect(resent.map(\.text) == ["two", "three", "four"])
        #expect(resent.map(\.recipients) == [[1], [1], []])
        #expect(state.pending.map(\.seq) == [2, 3, 4], "resent messages stay until acknowledged")
        #expect(try Self.outgoing(&state).isEmpty)
    }

    @Test func aReconnectToARelayThatHasEverythingResendsNothing() throws {
        var state = Self.connected()
        for text in ["one", "two"] { _ = try state.queue(Self.payload(text), to: nil, reliable: true, now: 0) }
        _ = try Self.outgoing(&state)
        state.connection = nil
        _ = state.welcomed(Self.welcome(connectionID: 2, acceptedSeq: 2), wake: Self.wake(), now: 1)
        #expect(Self.reliable(try Self.outgoing(&state)).isEmpty)
        #expect(state.pending.isEmpty && state.pendingBytes == 0)
    }

    @Test func messagesToPlayersTheRelayDoesNotKnowGoToNobody() throws {
        // The match started with "d", but the relay's member list does not have it (yet).
        var state = MatchRelayState(matchID: "m", localPlayerID: "a", knownPlayers: Self.players + ["d"])
        _ = try state.queue(Self.payload("x"), to: ["d"], reliable: true, now: 0)
        _ = state.welcomed(Self.welcome(), wake: Self.wake(), now: 0)
        let sent = Self.reliable(try Self.outgoing(&state))
        #expect(sent.map(\.seq) == [1], "the number is still used up")
        #expect(sent.first?.recipients == [0], "addressed to this device alone, which the relay delivers to nobody")
    }

    // MARK: Receiving

    @Test func receivedMessagesAreNewInOrderAndDuplicatesAreDropped() {
        var state = Self.connected()
        #expect(Self.receive(&state, 1))
        #expect(Self.receive(&state, 2))
        #expect(!Self.receive(&state, 2), "a resent duplicate")
        #expect(!Self.receive(&state, 1), "an older one")
        #expect(Self.receive(&state, 3))
        #expect(state.lastReceived == 3)
        #expect(state.receivedSinceAck == 3, "duplicates are not counted for acknowledgement")
    }

    @Test func aGapIsAcceptedAndWhatIsBehindItIsDropped() {
        // The relay sends a member's stream in order over one WebSocket, so the device keeps only the highest
        // number: a later one is taken as new, and anything at or below it is a duplicate.
        var state = Self.connected()
        #expect(Self.receive(&state, 1))
        #expect(Self.receive(&state, 5))
        #expect(!Self.receive(&state, 3))
        #expect(!Self.receive(&state, 5))
        #expect(Self.receive(&state, 6))
    }

    @Test func whatArrivedIsAcknowledgedOnceCumulatively() throws {
        var state = Self.connected()
        #expect(try Self.outgoing(&state).isEmpty, "nothing received: no acknowledgement")
        _ = state.received(seq: 1)
        _ = state.received(seq: 2)
        _ = state.received(seq: 2)
        #expect(try Self.outgoing(&state) == [.ack(2)])
        #expect(state.receivedSinceAck == 0)
        #expect(try Self.outgoing(&state).isEmpty, "acknowledged once")
        _ = state.received(seq: 3)
        _ = try state.queue(Self.payload("x"), to: nil, reliable: true, now: 0)
        let frames = try Self.outgoing(&state)
        #expect(frames.first == .ack(3), "the acknowledgement goes before new messages")
        #expect(Self.reliable(frames).map(\.seq) == [1])
    }

    @Test func aReconnectKeepsTheReceivedCountUnlessTheRelayStartedANewStream() {
        var state = Self.connected(Self.welcome(receiverStream: 77))
        _ = state.received(seq: 1)
        _ = state.received(seq: 2)
        state.connection = nil

        _ = state.welcomed(Self.welcome(connectionID: 2, receiverStream: 77), wake: Self.wake(), now: 1)
        #expect(!Self.receive(&state, 2), "same stream: what arrived before the break is still a duplicate")
        #expect(Self.receive(&state, 3))

        state.connection = nil
        _ = state.welcomed(Self.welcome(connectionID: 3, receiverStream: 78), wake: Self.wake(), now: 2)
        #expect(state.receiverStream == 78)
        #expect(state.lastReceived == 0)
        #expect(Self.receive(&state, 1), "a new stream (the relay restarted) counts from the start")
    }

    // MARK: Limits

    @Test func theRateLimitRefusesSendsOverTheBurstAndRefills() throws {
        var state = Self.connected(Self.welcome(rate: 10, burst: 5))
        for _ in 0..<5 { _ = try state.queue(Self.payload("x"), to: nil, reliable: true, now: 0) }
        #expect(Self.code { _ = try state.queue(Self.payload("x"), to: nil, reliable: true, now: 0) } == .communicationsFailure)
        #expect(
            Self.code { _ = try state.queue(Self.payload("x"), to: nil, reliable: false, now: 0) } == .communicationsFailure,
            "reliable and unreliable messages share the limit")
        #expect(state.pending.count == 5, "a refused message is not queued")
        #expect(state.nextSeq == 6, "nor numbered")

        // 0.1 s at 10 per second: one more.
        _ = try state.queue(Self.payload("x"), to: nil, reliable: true, now: 0.1)
        #expect(Self.code { _ = try state.queue(Self.payload("x"), to: nil, reliable: true, now: 0.1) } == .communicationsFailure)
        #expect(Self.reliable(try Self.outgoing(&state)).map(\.seq) == [1, 2, 3, 4, 5, 6])
    }

    @Test func eachWelcomeReplacesTheRateLimit() throws {
        var state = Self.connected(Self.welcome(rate: 1, burst: 2))
        for _ in 0..<2 { _ = try state.queue(Self.payload("x"), to: nil, reliable: false, now: 0) }
        #expect(Self.code { _ = try state.queue(Self.payload("x"), to: nil, reliable: false, now: 0) } == .communicationsFailure)
        state.connection = nil
        _ = state.welcomed(Self.welcome(connectionID: 2, rate: 1, burst: 4), wake: Self.wake(), now: 0)
        for _ in 0..<4 { _ = try state.queue(Self.payload("x"), to: nil, reliable: false, now: 0) }
        #expect(Self.code { _ = try state.queue(Self.payload("x"), to: nil, reliable: false, now: 0) } == .communicationsFailure)
    }

    @Test func theSendBufferIsBoundedAndAcknowledgementsReopenIt() throws {
        var state = Self.connected()
        let big = Data(count: Limits.maximumReliableMessageBytes)
        let fits = MatchRelayState.maximumPendingBytes / big.count
        for _ in 0..<fits { _ = try state.queue(big, to: nil, reliable: true, now: 0) }
        #expect(state.pendingBytes == fits * big.count)
        #expect(Self.code { _ = try state.queue(big, to: nil, reliable: true, now: 0) } == .communicationsFailure)
        #expect(state.pending.count == fits, "a refused message is not queued")
        // The limit counts bytes: a message that still fits is taken.
        let room = MatchRelayState.maximumPendingBytes - state.pendingBytes
        _ = try state.queue(Data(count: room), to: nil, reliable: true, now: 0)
        #expect(state.pendingBytes == MatchRelayState.maximumPendingBytes)
        #expect(Self.code { _ = try state.queue(Self.payload("x"), to: nil, reliable: true, now: 0) } == .communicationsFailure)
        // Unreliable messages are never held, so the buffer does not limit them.
        _ = try state.queue(Self.payload("x"), to: nil, reliable: false, now: 0)

        state.acknowledge(through: 1)
        _ = try state.queue(big, to: nil, reliable: true, now: 0)
        #expect(state.pendingBytes == MatchRelayState.maximumPendingBytes)
    }

    @Test func oversizedMessagesAreRefused() throws {
        var state = Self.connected()
        _ = try state.queue(Data(count: Limits.maximumReliableMessageBytes), to: nil, reliable: true, now: 0)
        #expect(
            Self.code { _ = try state.queue(Data(count: Limits.maximumReliableMessageBytes + 1), to: nil, reliable: true, now: 0) }
                == .invalidParameter)
        _ = try state.queue(Data(count: Limits.maximumUnreliableMessageBytes), to: nil, reliable: false, now: 0)
        #expect(
            Self.code { _ = try state.queue(Data(count: Limits.maximumUnreliableMessageBytes + 1), to: nil, reliable: false, now: 0) }
                == .invalidParameter)
        #expect(state.pending.count == 1)
    }

    @Test func recipientsMustBeOtherMembersStillInTheMatch() throws {
        var state = Self.state()
        #expect(Self.code { _ = try state.queue(Self.payload("x"), to: ["a"], reliable: true, now: 0) } == .invalidParameter)
        #expect(
            Self.code { _ = try state.queue(Self.payload("x"), to: ["z"], reliable: true, now: 0) } == .invalidParameter,
            "before the welcome, the match's starting players are checked")
        _ = try state.queue(Self.payload("x"), to: ["b"], reliable: true, now: 0)

        _ = state.welcomed(Self.welcome(members: Self.members([.connected, .connected, .left])), wake: Self.wake(), now: 0)
        #expect(Self.code { _ = try state.queue(Self.payload("x"), to: ["c"], reliable: true, now: 0) } == .invalidParameter)
        #expect(Self.code { _ = try state.queue(Self.payload("x"), to: ["b", "c"], reliable: false, now: 0) } == .invalidParameter)
        _ = try state.queue(Self.payload("x"), to: ["b"], reliable: true, now: 0)
        #expect(state.pending.count == 2)
    }

    @Test func anEndedMatchSendsNothing() throws {
        var state = Self.connected()
        state.ended = true
        #expect(Self.code { _ = try state.queue(Self.payload("x"), to: nil, reliable: true, now: 0) } == .invalidParameter)
        #expect(Self.code { _ = try state.queue(Self.payload("x"), to: nil, reliable: false, now: 0) } == .invalidParameter)
        #expect(state.pending.isEmpty)
    }

    // MARK: Unreliable data

    @Test func unreliableDataNeedsAConnectionAndGoesByUDPOnceConfirmed() throws {
        var state = Self.state()
        let lost = try state.queue(Self.payload("lost"), to: nil, reliable: false, now: 0)
        #expect(lost.wake == nil && lost.datagram == nil && lost.direct.isEmpty, "unreliable data without a connection is dropped")
        _ = state.welcomed(Self.welcome(connectionID: 9), wake: Self.wake(), now: 0)

        // UDP not confirmed: over the WebSocket.
        _ = try state.queue(Self.payload("ws"), to: ["c"], reliable: false, now: 0)
        #expect(try Self.outgoing(&state) == [.unreliable(recipients: [2], payload: ByteBuffer(string: "ws"))])

        state.connection?.udpConfirmed = true
        for expected in [UInt64(1), 2] {
            guard let (header, recipients, _) = try state.queue(Self.payload("udp"), to: ["b"], reliable: false, now: 0).datagram else {
                Issue.record("with UDP confirmed, unreliable data is a datagram")
                return
            }
            #expect(header.connectionID == 9)
            #expect(header.counter == expected, "each datagram takes the next counter")
            #expect(recipients == [1])
        }
        #expect(try Self.outgoing(&state).isEmpty)
    }

    // MARK: Members

    @Test func memberChangesAreReportedOnce() {
        var state = Self.state()
        let changes = state.welcomed(Self.welcome(members: Self.members([.connected, .expected, .connected])), wake: Self.wake(), now: 0)
        #expect(changes.map(\.playerID) == ["a", "b", "c"])
        let unchanged = state.update(RelayMember(index: 1, playerID: "b", state: .expected))
        #expect(unchanged.isEmpty, "no change")
        let changed = state.update(RelayMember(index: 1, playerID: "b", state: .connected))
        #expect(changed.map(\.state) == [.connected])
        #expect(state.player(2) == "c")
        #expect(state.player(3) == nil)
        state.connection = nil
        let announced = state.welcomed(Self.welcome(connectionID: 2), wake: Self.wake(), now: 1)
        #expect(announced.isEmpty, "a reconnect's welcome announces only what changed")
    }

    // MARK: Voice channels

    @Test func voiceChannelsAreToldToEveryNewConnection() throws {
        var state = Self.state()
        let nobody = try state.queueVoiceChannel("team", .listening)
        #expect(nobody == nil, "no connection yet: remembered only")
        _ = try state.queueVoiceChannel("all", .joined)
        _ = state.welcomed(Self.welcome(), wake: Self.wake(), now: 0)
        let told: [RelayClientFrame] = [.voiceChannel(membership: .joined, channel: "all"), .voiceChannel(membership: .listening, channel: "team")]
        #expect(try Self.outgoing(&state) == told)

        _ = try state.queueVoiceChannel("all", .none)
        #expect(try Self.outgoing(&state) == [.voiceChannel(membership: .none, channel: "all")])
        let unchangedWake = try state.queueVoiceChannel("all", .none)
        #expect(unchangedWake == nil, "no change: nothing to tell")

        state.connection = nil
        _ = state.welcomed(Self.welcome(connectionID: 2), wake: Self.wake(), now: 1)
        #expect(try Self.outgoing(&state) == [.voiceChannel(membership: .listening, channel: "team")])
    }

    @Test func aMemberIsInABoundedNumberOfVoiceChannels() throws {
        var state = Self.connected()
        for index in 0..<VoiceLimits.maximumChannelsPerMember { _ = try state.queueVoiceChannel("c\(index)", .joined) }
        #expect(Self.code { _ = try state.queueVoiceChannel("one more", .joined) } == .invalidParameter)
        _ = try state.queueVoiceChannel("c0", .listening)
        _ = try state.queueVoiceChannel("c0", .none)
        _ = try state.queueVoiceChannel("one more", .joined)
        #expect(state.voiceChannels.count == VoiceLimits.maximumChannelsPerMember)
    }
}
