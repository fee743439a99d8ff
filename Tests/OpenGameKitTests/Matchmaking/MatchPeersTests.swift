import Foundation
import GameCenterProtocol
import NIOCore
import Testing
@testable import OpenGameKit

/// `MatchPeers` on its own: two members' direct path, sealed datagrams carried by a test network that can drop them,
/// and reliable messages that come by both paths.
@Suite struct MatchPeersTests {
    static let addressA = PeerCandidate(address: [10, 0, 0, 1], port: 5001)!
    static let addressB = PeerCandidate(address: [10, 0, 0, 2], port: 5002)!

    /// Alice ("a") and Bob ("b") of match "m", each with the other's offer.
    struct Pair {
        var alice = MatchPeers(matchID: "m", localPlayerID: "a", stream: 11)
        var bob = MatchPeers(matchID: "m", localPlayerID: "b", stream: 22)
        /// What Bob's game was handed, in order.
        var bobGot: [String] = []
        /// Whether the network between them drops everything.
        var blocked = false

        init() {
            let aliceTook = alice.offered(bob.offer(candidates: [MatchPeersTests.addressB]), by: "b", now: 0)
            let bobTook = bob.offered(alice.offer(candidates: [MatchPeersTests.addressA]), by: "a", now: 0)
            #expect(aliceTook && bobTook)
        }

        /// Carries `sends` from `from` to the other side, and the replies back, until nothing is left.
        mutating func carry(_ sends: [MatchPeers.Send], from alicesSide: Bool, now: Double) {
            var queue = sends.map { ($0, alicesSide) }
            while !queue.isEmpty && !blocked {
                let (send, fromAlice) = queue.removeFirst()
                var datagram = ByteBuffer()
                RelayDatagram.seal(send.header, body: send.body, key: send.key, into: &datagram)
                let source = fromAlice ? MatchPeersTests.addressA : MatchPeersTests.addressB
                let received = datagram.withUnsafeMutableReadableBytes { bytes -> MatchPeers.Received? in
                    let header = RelayDatagram.peekHeader(UnsafeRawBufferPointer(bytes))!
                    let key = fromAlice ? bob.key(for: header) : alice.key(for: header)
                    guard let key, let body = RelayDatagram.openInPlace(bytes, header: header, key: key) else { return nil }
                    return fromAlice
                        ? bob.received(header, body: UnsafeRawBufferPointer(body), from: source, now: now)
                        : alice.received(header, body: UnsafeRawBufferPointer(body), from: source, now: now)
                }
                guard let received else { continue }
                if fromAlice { bobGot += received.deliveries.map { String(decoding: $0, as: UTF8.self) } }
                queue += received.replies.map { ($0, !fromAlice) }
            }
        }

        /// Both sides tick at `now` and their datagrams are carried.
        mutating func tick(_ now: Double) -> [(playerID: String, messages: [MatchPeers.Unconfirmed])] {
            let a = alice.tick(now: now)
            let b = bob.tick(now: now)
            carry(a.sends, from: true, now: now)
            carry(b.sends, from: false, now: now)
            return a.toRelay
        }

        /// Alice sends `text` reliably to Bob: directly when she can, else the returned number goes through the relay.
        mutating func send(_ text: String, now: Double) -> UInt64? {
            let number = alice.number(to: "b")
            guard let send = alice.sendReliable(ByteBuffer(string: text), number: number, to: "b", now: now) else { return number }
            carry([send], from: true, now: now)
            return nil
        }

        /// Message `number` reaches Bob through the relay.
        mutating func relay(_ text: String, number: UInt64) {
            if case .accepted(let messages) = bob.arrive(Data(text.utf8), number: number, stream: 11, from: "a") {
                bobGot += messages.map { String(decoding: $0, as: UTF8.self) }
            }
        }
    }

    @Test func probesMakeThePathDirectBothWaysAndDirectMessagesAreConfirmed() {
        #expect(MatchPeers(matchID: "m", localPlayerID: "a", stream: 1).tickInterval == .milliseconds(100), "no peer: now and then")
        var pair = Pair()
        #expect(pair.alice.tickInterval == .milliseconds(20), "probing: often")
        #expect(pair.alice.directAddress(of: "b") == nil)
        _ = pair.tick(0)
        #expect(pair.alice.directAddress(of: "b") == Self.addressB)
        #expect(pair.bob.directAddress(of: "a") == Self.addressA)
        for text in ["one", "two", "three"] {
            let relayed = pair.send(text, now: 0.1)
            #expect(relayed == nil, "direct")
        }
        #expect(pair.bobGot == ["one", "two", "three"])
        #expect(pair.alice.unconfirmedBytes == 0, "every message was acknowledged")
        #expect(pair.alice.tickInterval == .milliseconds(100), "direct and nothing to resend: now and then")
    }

    @Test func messagesThatCameBothWaysAreHandedOverOnceAndInOrder() {
        var pair = Pair()
        // The first goes through the relay: the path is not direct yet.
        let first = pair.send("one", now: 0)
        #expect(first == 1)
        _ = pair.tick(0)
        // The next two go direct and overtake it: held.
        do {
            let sent = pair.send("two", now: 0.1)
            #expect(sent == nil)
        }
        do {
            let sent = pair.send("three", now: 0.1)
            #expect(sent == nil)
        }
        #expect(pair.bobGot.isEmpty, "held until the first arrives")
        #expect(pair.alice.unconfirmedBytes == 0, "held messages are acknowledged: they need no resending")
        pair.relay("one", number: 1)
        #expect(pair.bobGot == ["one", "two", "three"])
        // A copy of a message (resent through the relay after a fallback) is dropped.
        pair.relay("two", number: 2)
        #expect(pair.bobGot == ["one", "two", "three"])
    }

    @Test func whatASilentPathDidNotConfirmGoesThroughTheRelayInOrder() {
        var pair = Pair()
        _ = pair.tick(0)
        do {
            let sent = pair.send("one", now: 0.1)
            #expect(sent == nil)
        }
        pair.blocked = true
        do {
            let sent = pair.send("two", now: 0.2)
            #expect(sent == nil, "still direct: the path has not gone silent yet")
        }
        do {
            let sent = pair.send("three", now: 0.3)
            #expect(sent == nil)
        }
        var toRelay: [(playerID: String, messages: [MatchPeers.Unconfirmed])] = []
        var now = 0.3
        while toRelay.isEmpty && now < 5 {
            now += 0.02
            toRelay = pair.tick(now)
        }
        #expect(now > 2 && now < 3, "falls back about 2 s after the last answer (\(now))")
        #expect(pair.alice.directAddress(of: "b") == nil)
        #expect(toRelay.map(\.playerID) == ["b"])
        #expect(toRelay.first?.messages.map(\.number) == [2, 3])
        #expect(pair.alice.unconfirmedBytes == 0, "handed to the relay")
        do {
            let sent = pair.send("four", now: now)
            #expect(sent == 4, "through the relay now")
        }
        for message in toRelay[0].messages { pair.relay(String(buffer: message.payload), number: message.number) }
        pair.relay("four", number: 4)
        #expect(pair.bobGot == ["one", "two", "three", "four"])
    }

    @Test func unansweredMessagesAreResentOnTheDirectPath() {
        var pair = Pair()
        _ = pair.tick(0)
        pair.blocked = true
        do {
            let sent = pair.send("lost once", now: 0.1)
            #expect(sent == nil)
        }
        pair.blocked = false
        _ = pair.tick(0.2)
        #expect(pair.bobGot.isEmpty, "not resent before 200 ms")
        _ = pair.tick(0.35)
        #expect(pair.bobGot == ["lost once"], "resent after 200 ms")
        #expect(pair.alice.unconfirmedBytes == 0)
    }

    @Test func anotherMembersKeysOpenNothingAndAnUnusableKeyIsRefused() {
        var pair = Pair()
        var carol = MatchPeers(matchID: "m", localPlayerID: "c", stream: 33)
        let tookAlice = carol.offered(pair.alice.offer(candidates: [Self.addressA]), by: "a", now: 0)
        let tookZero = carol.offered(PeerOffer(stream: 44, publicKey: [UInt8](repeating: 0, count: 32), candidates: []), by: "d", now: 0)
        #expect(tookAlice && !tookZero, "a key that gives the all-zero secret is refused")
        // Alice's datagram to Bob does not open with Carol's key for Alice, nor with Bob's under another player's name.
        let send = pair.alice.sendUnreliable(ByteBuffer(string: "x"), to: "b")
        #expect(send == nil, "not direct yet")
        _ = pair.tick(0)
        let direct = pair.alice.sendUnreliable(ByteBuffer(string: "secret"), to: "b")!
        var datagram = ByteBuffer()
        RelayDatagram.seal(direct.header, body: direct.body, key: direct.key, into: &datagram)
        let opened = datagram.withUnsafeMutableReadableBytes { bytes -> Bool in
            let header = RelayDatagram.peekHeader(UnsafeRawBufferPointer(bytes))!
            guard let key = carol.key(for: header) else { return false }
            return RelayDatagram.openInPlace(bytes, header: header, key: key) != nil
        }
        #expect(!opened)
    }
}
