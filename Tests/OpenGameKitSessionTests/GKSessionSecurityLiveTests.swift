import Crypto
import Foundation
import GameCenterProtocol
import LANTestSupport
import NetworkFaultProxy
import NIOCore
import NIOPosix
import OpenGameKitSessionWire
import Testing
@testable import OpenGameKit

/// Two `GKSession`s on loopback with a man in the middle: a ``TamperingTCPProxy`` that the asking session connects
/// through (it is told the proxy is where the other session is), and a raw socket that sees every UDP datagram.
@Suite("GKSession security over loopback", .enabled(if: LoopbackMulticast.isAvailable, Comment(rawValue: LoopbackMulticast.skipMessage)))
struct GKSessionSecurityLiveTests {
    @Test(.timeLimit(.minutes(1)), .enabled(if: UDPCapture.isAvailable || lanPeersRequired, "needs root, for a raw socket"))
    func theWireCarriesNoClearTextYetTheDataArrives() async throws {
        let tag = String(UInt32.random(in: 100_000...999_999))
        let (a, ra, b, rb, proxy) = try await pairThroughProxy("wire", names: ("Ariadne\(tag)", "Bellerophon\(tag)"))
        let capture = try UDPCapture(ports: [a.datagramPort, b.datagramPort])
        let marker = "clear-text-marker-\(tag)"
        try a.send(Data("\(marker) reliable a→b".utf8), toPeers: [b.peerID], with: .reliable)
        try b.send(Data("\(marker) reliable b→a".utf8), toPeers: [a.peerID], with: .reliable)
        for index in 0..<5 {
            try a.send(Data("\(marker) unreliable a→b \(index)".utf8), toPeers: [b.peerID], with: .unreliable)
            try b.send(Data("\(marker) unreliable b→a \(index)".utf8), toPeers: [a.peerID], with: .unreliable)
        }
        try await waitUntil("both peers got all six messages") { rb.messageCount == 6 && ra.messageCount == 6 }
        #expect(rb.messages.allSatisfy { String(decoding: $0.data, as: UTF8.self).hasPrefix(marker) && $0.peer == a.peerID })
        try await waitUntil("the capture holds the session's datagrams") { capture.datagrams.count >= 10 }
        let datagrams = capture.stop()

        // TCP, both ways: each starts with its clear handshake, and nothing else is readable.
        let secrets = [marker, "Ariadne\(tag)", "Bellerophon\(tag)", a.peerID, b.peerID].map { Array($0.utf8) }
        for direction in [TamperingTCPProxy.Direction.toTarget, .toClient] {
            let stream = proxy.recorded(direction)
            #expect(Array(stream.prefix(8)) == [0, 0, 0, 68] + Array("OGK".utf8) + [2], "\(direction)")
            #expect(stream.count > 68 + 2 * (marker.utf8.count + 16), "\(direction): the messages crossed this stream")
            for secret in secrets { #expect(stream.firstRange(of: secret) == nil, "\(String(decoding: secret, as: UTF8.self)) in \(direction)") }
        }
        // UDP: every datagram the sessions exchanged was seen, sealed.
        #expect(datagrams.filter { $0.port == b.datagramPort }.count >= 5)
        #expect(datagrams.filter { $0.port == a.datagramPort }.count >= 5)
        for datagram in datagrams {
            #expect(Array(datagram.payload.prefix(4)) == Array("OGK".utf8) + [2])
            for secret in secrets { #expect(datagram.payload.firstRange(of: secret) == nil) }
        }

        // Replayed as they were seen, the datagrams are dropped: nothing is delivered twice.
        let droppedBefore = b.droppedDatagramCount + a.droppedDatagramCount
        let socket = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        for datagram in datagrams {
            let target = try SocketAddress(ipAddress: "127.0.0.1", port: Int(datagram.port))
            try await socket.writeAndFlush(AddressedEnvelope(remoteAddress: target, data: ByteBuffer(bytes: datagram.payload)))
        }
        try await waitUntil("every forged, replayed or cut datagram was dropped and counted") {
            b.droppedDatagramCount + a.droppedDatagramCount == droppedBefore + datagrams.count
        }
        #expect(rb.messageCount == 6 && ra.messageCount == 6)
        try await socket.close()
        await proxy.stop()
        await a.invalidate()
        await b.invalidate()
    }

    @Test(.timeLimit(.minutes(2)))
    func alteredInjectedAndReplayedRecordsCloseTheConnectionAndDeliverNothing() async throws {
        let (a, ra, b, rb, proxy) = try await pairThroughProxy("forge", names: ("Asker", "Accepter"))
        var round = 0
        /// Reconnects A to B through the proxy unless `round` is the first, and returns once both see the connection.
        func connected() async throws {
            round += 1
            guard round > 1 else { return }
            a.connect(toPeer: b.peerID, withTimeout: 10)
            try await waitUntil("A and B reconnected in round \(round)") { a.peers(with: .connected) == [b.peerID] && b.peers(with: .connected) == [a.peerID] }
        }
        /// Waits until both sides saw the connection end `round` times.
        func droppedOnBothSides(_ what: String) async throws {
            try await waitUntil("both sides dropped the connection after the \(what)") {
                ra.events.filter { $0 == .state(b.peerID, .disconnected) }.count == round
                    && rb.events.filter { $0 == .state(a.peerID, .disconnected) }.count == round
            }
        }

        // One byte of a sealed data record flipped on the way (its last, in the tag).
        try await connected()
        proxy.alterNext(.toTarget) { chunk in Array(chunk.dropLast()) + [chunk.last! ^ 0x01] }
        try a.send(Data("flipped".utf8), toPeers: [b.peerID], with: .reliable)
        try await droppedOnBothSides("flipped")

        // A clear data frame inserted in front of a genuine one (what could be injected into an unencrypted session).
        try await connected()
        let clearFrame = [0, 0, 0, 9] + SessionFrame.data(Data("injected".utf8)).encoded()
        proxy.alterNext(.toTarget) { chunk in clearFrame + chunk }
        try a.send(Data("behind the clear frame".utf8), toPeers: [b.peerID], with: .reliable)
        try await droppedOnBothSides("clear frame")

        // A well-formed record sealed with a key of the attacker's own, injected from B's side towards A.
        try await connected()
        var forgery = ByteBuffer()
        var sealer = SessionRecordSealer(cipher: ChaChaPolyCipher(key: SymmetricKey(size: .bits256)), counter: 7)
        _ = sealer.write(into: &forgery, SessionFrame.data(Data("forged".utf8)).encode)
        try await proxy.inject(Array(forgery.readableBytesView), .toClient)
        try await droppedOnBothSides("forged record")

        // A genuine record sent again: it arrived once, and its copy ends the connection.
        try await connected()
        try a.send(Data("only once".utf8), toPeers: [b.peerID], with: .reliable)
        try await waitUntil("B got the message once") { rb.messages.contains { $0.data == Data("only once".utf8) } }
        let genuine = try #require(proxy.chunks(.toTarget).last)
        try await proxy.inject(genuine, .toTarget)
        try await droppedOnBothSides("replayed")

        let delivered = (rb.messages + ra.messages).map { String(decoding: $0.data, as: UTF8.self) }
        #expect(delivered == ["only once"])
        #expect(!ra.events.contains(.sessionFailed) && !rb.events.contains(.sessionFailed))
        await proxy.stop()
        await a.invalidate()
        await b.invalidate()
    }

    @Test(.timeLimit(.minutes(1)))
    func onlySessionsWithTheSamePassphraseConnect() async throws {
        let id = uniqueSessionID("pass")
        let (a, ra) = try makeSession(id, "A", .peer, passphrase: "correct horse battery")
        let (same, rSame) = try makeSession(id, "Same", .peer, passphrase: "correct horse battery")
        let (other, rOther) = try makeSession(id, "Other", .peer, passphrase: "incorrect horse battery")
        let (open, rOpen) = try makeSession(id, "Open", .peer)
        for recorder in [rSame, rOther, rOpen] { recorder.answerRequests(true) }
        for session in [a, same, other, open] { session.isAvailable = true }
        try await waitUntil("A found the three other sessions") { Set(a.peers(with: .available)) == [same.peerID, other.peerID, open.peerID] }
        try await waitUntil("the open session found the private one") { open.peers(with: .available).contains(same.peerID) }

        a.connect(toPeer: same.peerID, withTimeout: 20)
        try await waitUntil("A and the session with the same passphrase connected") {
            a.peers(with: .connected) == [same.peerID] && same.peers(with: .connected) == [a.peerID]
        }
        try a.send(Data("private".utf8), toPeers: [same.peerID], with: .reliable)
        try a.send(Data("private, unreliable".utf8), toPeers: [same.peerID], with: .unreliable)
        try await waitUntil("the session with the same passphrase got both messages") { rSame.messageCount == 2 }

        // Another passphrase, or none, on either side: the asking side fails at once with the error (the 20 s
        // timeout would say timedOut), and the other side never hears a request.
        a.connect(toPeer: other.peerID, withTimeout: 20)
        a.connect(toPeer: open.peerID, withTimeout: 20)
        open.connect(toPeer: same.peerID, withTimeout: 20)
        try await waitUntil("A failed to authenticate the other passphrase and the open session") {
            ra.has(.failed(other.peerID, .authenticationFailed)) && ra.has(.failed(open.peerID, .authenticationFailed))
        }
        try await waitUntil("the open session failed to authenticate the private one") { rOpen.has(.failed(same.peerID, .authenticationFailed)) }
        #expect(!rOther.events.contains(.request(a.peerID)) && !rOpen.events.contains(.request(a.peerID)))
        #expect(!rSame.events.contains(.request(open.peerID)))
        #expect(a.peers(with: .connected) == [same.peerID])
        #expect(other.peers(with: .connected).isEmpty && open.peers(with: .connected).isEmpty)

        do {
            _ = try GKSession(sessionID: id, displayName: "Short", sessionMode: .peer, passphrase: "seven!!")
            Issue.record("a 7-byte passphrase was accepted")
        } catch let error as GKSessionError {
            #expect(error.code == .invalidParameter)
            #expect(error.message.contains("8 to 256 bytes"))
        }
        for session in [a, same, other, open] { await session.invalidate() }
    }

    /// Two peer-mode sessions, not advertising: A is told B is at a ``TamperingTCPProxy`` in front of B's listener,
    /// asks to connect, and B accepts.
    private func pairThroughProxy(
        _ prefix: String, names: (String, String)
    ) async throws -> (a: GKSession, ra: SessionRecorder, b: GKSession, rb: SessionRecorder, proxy: TamperingTCPProxy) {
        let id = uniqueSessionID(prefix)
        let (a, ra) = try makeSession(id, names.0, .peer)
        let (b, rb) = try makeSession(id, names.1, .peer)
        rb.answerRequests(true)
        let proxy = try await TamperingTCPProxy.start(forwardingTo: "127.0.0.1", port: Int(b.listeningPort))
        a.handleDiscovery(.found(peerID: b.peerID, displayName: names.1, host: "127.0.0.1", port: UInt16(proxy.port)))
        a.connect(toPeer: b.peerID, withTimeout: 10)
        try await waitUntil("A and B connected through the proxy") { ra.has(.state(b.peerID, .connected)) && rb.has(.state(a.peerID, .connected)) }
        return (a, ra, b, rb, proxy)
    }
}
