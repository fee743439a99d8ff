@testable import GameCenterServer
import GameCenterProtocol
import NIOCore
import Testing

/// The relay's rules without I/O: numbering, resending, duplicates, limits, timeouts and datagram addressing.
@Suite struct RelayMatchStateTests {
    /// A match of `players` members (p0, p1, …), every one connected.
    struct Fixture {
        var state: RelayMatchState
        var connections: [UInt64] = []
        var keys: [RelayKey] = []
        let statistics = RelayStatistics()
        var now = ContinuousClock.now

        init(players: Int, limits: RelayLimits = RelayLimits(), timeout: Duration = .seconds(10), peerToPeer: Bool = true) {
            state = RelayMatchState(limits: limits, timeout: timeout, peerToPeer: peerToPeer)
            _ = state.updateMembers(current: (0..<players).map { "p\($0)" }, now: now)
            for index in 0..<players {
                let key = RelayKey.random()
                keys.append(key)
                connections.append(UInt64(index + 100))
                _ = state.attach(
                    UInt8(index), connectionID: UInt64(index + 100), key: key, wake: Self.wake(),
                    receiverStream: 0, received: 0, senderStream: 1, now: now)
            }
        }

        static func wake() -> AsyncStream<Void>.Continuation { AsyncStream.makeStream(of: Void.self).continuation }

        mutating func send(_ text: String, from sender: UInt8, seq: UInt64, to recipients: [UInt8] = []) {
            _ = state.receiveReliable(
                from: sender, connectionID: connections[Int(sender)], seq: seq, recipients: recipients,
                payload: ByteBuffer(string: text), now: now, statistics: statistics)
        }

        /// The reliable payloads (and seqs) waiting to be written to `member`, and whether an error frame is among them.
        mutating func outgoing(_ member: UInt8) -> (reliable: [(UInt64, String)], errors: Int, closing: RelayCloseReason?) {
            switch state.takeOutgoing(member, connectionID: connections[Int(member)]) {
            case .close(let reason, _):
                return ([], 0, reason)
            case .frames(let frames):
                var reliable: [(UInt64, String)] = []
                var errors = 0
                for frame in frames {
                    switch try? RelayServerFrame.read(from: frame) {
                    case .reliable(let seq, _, let payload)?: reliable.append((seq, String(buffer: payload)))
                    case .error?: errors += 1
                    default: break
                    }
                }
                return (reliable, errors, nil)
            }
        }
    }

    @Test func aReconnectingMemberGetsWhatItHadNotAcknowledgedAndNothingTwice() {
        var match = Fixture(players: 2)
        for seq in 1...3 { match.send("m\(seq)", from: 0, seq: UInt64(seq)) }
        #expect(match.outgoing(1).reliable.map(\.1) == ["m1", "m2", "m3"])
        match.state.acknowledge(1, connectionID: match.connections[1], through: 1, now: match.now)
        let stream = match.state.members[1].receiverStream
        match.connections[1] = 201
        _ = match.state.attach(
            1, connectionID: 201, key: .random(), wake: Fixture.wake(), receiverStream: stream, received: 1,
            senderStream: 1, now: match.now)
        #expect(match.outgoing(1).reliable.map(\.0) == [2, 3])
        #expect(match.outgoing(1).reliable.isEmpty)
        // A device that knows another numbering (the relay restarted) gets everything still held.
        match.connections[1] = 202
        _ = match.state.attach(
            1, connectionID: 202, key: .random(), wake: Fixture.wake(), receiverStream: 999, received: 3,
            senderStream: 1, now: match.now)
        #expect(match.outgoing(1).reliable.map(\.0) == [2, 3])
    }

    @Test func aResentMessageIsAcceptedOnceAndANewSenderStreamStartsOver() {
        var match = Fixture(players: 2)
        match.send("a", from: 0, seq: 1)
        match.send("a again", from: 0, seq: 1)
        match.send("b", from: 0, seq: 2)
        #expect(match.outgoing(1).reliable.map(\.1) == ["a", "b"])
        #expect(match.statistics.snapshot()["reliableDuplicates"] == 1)
        match.connections[0] = 300
        _ = match.state.attach(
            0, connectionID: 300, key: .random(), wake: Fixture.wake(), receiverStream: 0, received: 0,
            senderStream: 2, now: match.now)
        match.send("new game", from: 0, seq: 1)
        #expect(match.outgoing(1).reliable.map(\.1) == ["new game"])
    }

    @Test func subsetsReachOnlyTheirRecipientsAndNonMembersAreReportedOnceASecond() {
        var match = Fixture(players: 4)
        match.send("to 1", from: 0, seq: 1, to: [1])
        match.send("to 2 and 3", from: 0, seq: 2, to: [2, 3, 9])
        match.send("to self", from: 0, seq: 3, to: [0])
        #expect(match.outgoing(1).reliable.map(\.1) == ["to 1"])
        #expect(match.outgoing(2).reliable.map(\.1) == ["to 2 and 3"])
        #expect(match.outgoing(3).reliable.map(\.1) == ["to 2 and 3"])
        #expect(match.outgoing(0).errors == 1)
        #expect(match.statistics.snapshot()["nonMemberRecipients"] == 2)
    }

    @Test func aReceiverThatFallsTooFarBehindIsTakenOut() {
        var limits = RelayLimits()
        limits.maximumUnackedMessages = 3
        var match = Fixture(players: 3, limits: limits)
        match.state.acknowledge(2, connectionID: match.connections[2], through: 0, now: match.now)
        for seq in 1...3 {
            match.send("m\(seq)", from: 0, seq: UInt64(seq))
            match.state.acknowledge(2, connectionID: match.connections[2], through: UInt64(seq), now: match.now)
        }
        #expect(match.state.members[1].state == .connected)
        match.send("m4", from: 0, seq: 4)
        #expect(match.state.members[1].state == .left)
        #expect(match.state.members[2].state == .connected)
        #expect(match.outgoing(1).closing == .tooSlow)
        #expect(match.statistics.snapshot()["membersTooSlow"] == 1)
    }

    @Test func aSenderBeyondTheBurstIsTakenOutAndStoredAsLeaving() {
        var limits = RelayLimits()
        limits.burstMessages = 10
        limits.messagesPerSecond = 1
        var match = Fixture(players: 2, limits: limits, timeout: .seconds(1))
        var effects = RelayMatchState.Effects()
        for seq in 1...20 {
            if case .delivered(let more) = match.state.receiveReliable(
                from: 0, connectionID: match.connections[0], seq: UInt64(seq), recipients: [],
                payload: ByteBuffer(string: "x"), now: match.now, statistics: match.statistics)
            {
                effects.append(more)
            }
        }
        // The relay allows the advertised burst plus what the rate gives during one timeout (10 + 1).
        #expect(match.outgoing(1).reliable.count == 11)
        #expect(effects.departed.map(\.playerID) == ["p0"])
        #expect(effects.departed.map(\.reason) == [.flooding])
    }

    @Test func silentMembersAndMembersWhoNeverCameTimeOut() {
        var state = RelayMatchState(limits: RelayLimits(), timeout: .seconds(2))
        let start = ContinuousClock.now
        _ = state.updateMembers(current: ["a", "b", "c"], now: start)
        _ = state.attach(0, connectionID: 1, key: .random(), wake: Fixture.wake(), receiverStream: 0, received: 0, senderStream: 1, now: start)
        _ = state.attach(1, connectionID: 2, key: .random(), wake: Fixture.wake(), receiverStream: 0, received: 0, senderStream: 1, now: start)
        let statistics = RelayStatistics()
        let early = state.expire(now: start + .seconds(1), statistics: statistics)
        #expect(early.departed.isEmpty)
        state.heard(0, connectionID: 1, now: start + .milliseconds(1500))
        let expired = state.expire(now: start + .milliseconds(2500), statistics: statistics)
        #expect(Set(expired.departed.map(\.playerID)) == ["b", "c"])
        #expect(state.members.map(\.state) == [.connected, .left, .left])
        let last = state.expire(now: start + .seconds(4), statistics: statistics)
        #expect(last.departed.map(\.playerID) == ["a"])
        #expect(state.isOver)
    }

    @Test func unreliableDataGoesByUDPWhereTheReceiverHasAnAddressAndOverItsWebSocketElse() throws {
        var match = Fixture(players: 3)
        let address = try #require(DatagramAddress(try SocketAddress(ipAddress: "127.0.0.1", port: 4000)))
        let first = match.state.acceptDatagram(1, connectionID: match.connections[1], counter: 1, from: address, now: match.now)
        let replayed = match.state.acceptDatagram(1, connectionID: match.connections[1], counter: 1, from: address, now: match.now)
        #expect(first && !replayed)
        let datagrams = DatagramOutbox()
        _ = match.state.receiveUnreliable(
            from: 0, recipients: [], payload: ByteBuffer(string: "pos"), now: match.now,
            statistics: match.statistics, datagrams: datagrams)
        #expect(datagrams.count == 1)
        #expect(datagrams.datagram(0).address.port == 4000)
        let (header, body) = try RelayDatagram.open(ByteBuffer(bytes: datagrams.datagram(0).bytes), key: match.keys[1])
        #expect(header.kind == .serverData && header.connectionID == match.connections[1])
        let (sender, payload) = try RelayDatagram.readServerDataBody(body)
        #expect(sender == 0 && String(buffer: payload) == "pos")
        guard case .frames(let frames) = match.state.takeOutgoing(2, connectionID: match.connections[2]) else {
            Issue.record("member 2's connection closed")
            return
        }
        #expect(
            frames.contains { if case .unreliable(0, let payload)? = try? RelayServerFrame.read(from: $0) { String(buffer: payload) == "pos" } else { false } })
    }

    // MARK: Direct paths

    /// The offers among the frames waiting for `member`, by sender.
    static func offers(_ match: inout Fixture, to member: UInt8) -> [UInt8: PeerOffer] {
        guard case .frames(let frames) = match.state.takeOutgoing(member, connectionID: match.connections[Int(member)]) else { return [:] }
        var offers: [UInt8: PeerOffer] = [:]
        for frame in frames {
            if case .peerOffer(let sender, let offer)? = try? RelayServerFrame.read(from: frame) { offers[sender] = offer }
        }
        return offers
    }

    static let offer = PeerOffer(stream: 7, publicKey: [UInt8](repeating: 1, count: 32), candidates: [PeerCandidate(address: [10, 0, 0, 5], port: 5000)!])

    @Test func anOfferGoesToTheOthersWithTheAddressTheRelaySawAndToMembersWhoConnectLater() throws {
        var match = Fixture(players: 3)
        let seen = try #require(DatagramAddress(try SocketAddress(ipAddress: "203.0.113.9", port: 61_000)))
        let accepted = match.state.acceptDatagram(0, connectionID: match.connections[0], counter: 1, from: seen, now: match.now)
        #expect(accepted)
        _ = match.state.receivePeerOffer(from: 0, connectionID: match.connections[0], Self.offer, now: match.now)
        let told = Self.offers(&match, to: 1)
        #expect(told[0]?.stream == 7)
        #expect(told[0]?.candidates == Self.offer.candidates + [PeerCandidate(address: [203, 0, 113, 9], port: 61_000)!])
        #expect(Self.offers(&match, to: 0).isEmpty, "not back to the sender")
        // A new connection of member 2 is told it again.
        _ = match.state.attach(2, connectionID: 300, key: .random(), wake: Fixture.wake(), receiverStream: 0, received: 0, senderStream: 1, now: match.now)
        match.connections[2] = 300
        #expect(Self.offers(&match, to: 2)[0]?.stream == 7)
        // An offer on a replaced connection is ignored.
        _ = match.state.receivePeerOffer(from: 1, connectionID: 999, Self.offer, now: match.now)
        #expect(Self.offers(&match, to: 0).isEmpty)
        // A connection that keeps offering is passed on a few times, then no more (each one is queued for everyone).
        var passedOn = 0
        for _ in 0..<100 {
            _ = match.state.receivePeerOffer(from: 1, connectionID: match.connections[1], Self.offer, now: match.now)
            passedOn += Self.offers(&match, to: 0).count
        }
        #expect(passedOn == RelayMatchState.maximumPeerOffersPerConnection)
    }

    @Test func aRelayOnlyMatchPassesNoOfferOnAndSaysSoInTheWelcome() {
        var match = Fixture(players: 2, peerToPeer: false)
        _ = match.state.receivePeerOffer(from: 0, connectionID: match.connections[0], Self.offer, now: match.now)
        #expect(Self.offers(&match, to: 1).isEmpty)
        let (welcome, _) = match.state.attach(
            1, connectionID: 301, key: .random(), wake: Fixture.wake(), receiverStream: 0, received: 0, senderStream: 1, now: match.now)
        #expect(!welcome.peerToPeer)
        var open = Fixture(players: 2)
        let (openWelcome, _) = open.state.attach(
            1, connectionID: 302, key: .random(), wake: Fixture.wake(), receiverStream: 0, received: 0, senderStream: 1, now: .now)
        #expect(openWelcome.peerToPeer)
    }
}
