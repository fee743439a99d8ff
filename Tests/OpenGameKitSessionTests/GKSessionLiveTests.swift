import Crypto
import Foundation
import GameCenterProtocol
import LANTestSupport
import NetworkFaultProxy
import NIOCore
import NIOPosix
import OpenGameKitSessionWire
import Synchronization
import Testing
@testable import OpenGameKit

@Suite("GKSession over loopback", .enabled(if: LoopbackMulticast.isAvailable, Comment(rawValue: LoopbackMulticast.skipMessage)))
struct GKSessionLiveTests {
    @Test func invalidSessionIDsThrowWithTheRule() {
        #expect(throws: GKSessionError.self) { try GKSession(sessionID: "has space", displayName: "x", sessionMode: .peer) }
        do {
            _ = try GKSession(sessionID: "this-id-is-far-too-long", displayName: "x", sessionMode: .peer)
            Issue.record("no error")
        } catch let error as GKSessionError {
            #expect(error.code == .invalidParameter)
            #expect(error.message.contains("1–15 characters"))
        } catch {
            Issue.record("wrong error \(error)")
        }
        let derived = try? GKSession(sessionID: nil, displayName: nil, sessionMode: .peer)
        #expect(derived.map { !$0.sessionID.isEmpty && !$0.displayName.isEmpty && !$0.peerID.isEmpty } == true)
    }

    @Test(.timeLimit(.minutes(1)))
    func discoveryFollowsModesAndSessionIDs() async throws {
        let id = uniqueSessionID("disc")
        let (server, rs) = try makeSession(id, "Server", .server)
        let (client, rc) = try makeSession(id, "Client", .client)
        let (peer, rp) = try makeSession(id, "Peer", .peer)
        let (stranger, _) = try makeSession(uniqueSessionID("other"), "Stranger", .server)
        for session in [server, client, peer, stranger] { session.isAvailable = true }

        try await waitUntil("the client finds the server and the peer") { Set(client.peers(with: .available)) == [server.peerID, peer.peerID] }
        try await waitUntil("the peer finds the server") { peer.peers(with: .available) == [server.peerID] }
        try await quietPeriod(
            .milliseconds(500),
            because: "mDNS says when a service appears, never that none will: the announcements the client and the peer "
                + "saw reached the server and the stranger too, and this lets a session that wrongly browses find them")
        #expect(server.peers(with: .available).isEmpty)  // a server does not browse
        #expect(Set(client.peers(with: .available)) == [server.peerID, peer.peerID])  // not itself, not the stranger
        #expect(peer.peers(with: .available) == [server.peerID])  // not itself, not the client
        try await waitUntil("the client's delegate hears the server is available: \(rc.events) server \(server.peerID) peer \(peer.peerID)") {
            rc.has(.state(server.peerID, .available))
        }
        #expect(client.displayName(forPeer: server.peerID) == "Server")
        #expect(client.displayName(forPeer: client.peerID) == "Client")
        #expect(rs.events.isEmpty)
        _ = rp
        for session in [server, client, peer, stranger] { await session.invalidate() }
    }

    @Test(.timeLimit(.minutes(1)))
    func goingUnavailableIsSeenQuickly() async throws {
        let id = uniqueSessionID("gone")
        let (a, _) = try makeSession(id, "A", .server)
        let (b, rb) = try makeSession(id, "B", .client)
        a.isAvailable = true
        b.isAvailable = true
        try await waitUntil("B finds A") { b.peers(with: .available) == [a.peerID] }
        let start = ContinuousClock.now
        a.isAvailable = false
        // A goodbye, not the 120 s TTL running out; generous for a loaded CI machine (about 1 s when idle).
        try await waitUntil("B hears A become unavailable") { rb.has(.state(a.peerID, .unavailable)) }
        #expect(ContinuousClock.now - start < .seconds(8))
        #expect(b.peers(with: .available).isEmpty)
        await a.invalidate()
        await b.invalidate()
    }

    @Test(.timeLimit(.minutes(1)))
    func connectDenyTimeoutAndCancel() async throws {
        let id = uniqueSessionID("deny")
        let (a, ra) = try makeSession(id, "A", .client)
        let (b, rb) = try makeSession(id, "B", .server)
        a.isAvailable = true
        b.isAvailable = true
        try await waitUntil("A finds B") { a.peers(with: .available) == [b.peerID] }

        // Deny.
        rb.answerRequests(false)
        a.connect(toPeer: b.peerID, withTimeout: 5)
        try await waitUntil("A hears B declined") { ra.has(.failed(b.peerID, .declined)) }
        #expect(rb.has(.request(a.peerID)))

        // Timeout: B leaves the request pending.
        rb.answerRequests(nil)
        let start = ContinuousClock.now
        a.connect(toPeer: b.peerID, withTimeout: 1)
        try await waitUntil("A's request times out") { ra.has(.failed(b.peerID, .timedOut)) }
        #expect(ContinuousClock.now - start < .seconds(8), "the 1 s timeout, not something much later")
        try await waitUntil("B forgot the timed-out request") { b.peers(with: .connecting).isEmpty }

        // Cancel.
        let requests = rb.events.filter { $0 == .request(a.peerID) }.count
        a.connect(toPeer: b.peerID, withTimeout: 10)
        try await waitUntil("B is asked again") { rb.events.filter { $0 == .request(a.peerID) }.count == requests + 1 }
        #expect(b.peers(with: .connecting) == [a.peerID])
        a.cancelConnect(toPeer: b.peerID)
        try await waitUntil("B forgot the cancelled request") { b.peers(with: .connecting).isEmpty }
        #expect(throws: GKSessionError.self) { try b.acceptConnection(fromPeer: a.peerID) }
        #expect(a.peers(with: .connecting).isEmpty)
        #expect(a.peers(with: .available) == [b.peerID])

        // Unknown peer.
        a.connect(toPeer: "nobody", withTimeout: 1)
        try await waitUntil("A hears the peer is unknown") { ra.has(.failed("nobody", .peerNotFound)) }
        await a.invalidate()
        await b.invalidate()
    }

    @Test(.timeLimit(.minutes(1)))
    func reliableMessagesArriveInOrderBothWays() async throws {
        let (a, ra, b, rb) = try await connectedPair("order")
        let count = 2_000
        let senders = [(a, b.peerID), (b, a.peerID)]
        await withTaskGroup(of: Void.self) { group in
            for (sender, target) in senders {
                group.addTask {
                    for index in 0..<count {
                        try? sender.send(Data("\(index)".utf8), toPeers: [target], with: .reliable)
                    }
                }
            }
        }
        try await waitUntil("both got all \(count) messages", within: .seconds(20)) { ra.messages.count == count && rb.messages.count == count }
        #expect(rb.messages.map { String(decoding: $0.data, as: UTF8.self) } == (0..<count).map(String.init))
        #expect(ra.messages.map { String(decoding: $0.data, as: UTF8.self) } == (0..<count).map(String.init))
        #expect(Set(rb.messages.map(\.peer)) == [a.peerID])
        await a.invalidate()
        await b.invalidate()
    }

    /// The seed's object form of the data handler: an object with `receiveData(_:fromPeer:inSession:context:)`,
    /// given with a context that comes back with every message; the session does not keep the object alive.
    @Test(.timeLimit(.minutes(1)))
    func anObjectGivenWithAContextReceivesTheData() async throws {
        final class Receiver: GKSessionDataReceiver {
            let received = Mutex<[(text: String, peer: String, context: String?)]>([])
            func receiveData(_ data: Data, fromPeer peer: String, inSession session: GKSession, context: (any Sendable)?) {
                received.withLock { $0.append((String(decoding: data, as: UTF8.self), peer, context as? String)) }
            }
        }
        let (a, _, b, _) = try await connectedPair("object")
        var receiver: Receiver? = Receiver()
        b.setDataReceiveHandler(receiver, withContext: "the table")
        for index in 0..<3 { try a.send(Data("m\(index)".utf8), toPeers: [b.peerID], with: .reliable) }
        try await waitUntil("the object got three messages") { receiver!.received.withLock { $0.count } == 3 }
        #expect(receiver!.received.withLock { $0.map(\.text) } == ["m0", "m1", "m2"])
        #expect(receiver!.received.withLock { $0.allSatisfy { $0.peer == a.peerID && $0.context == "the table" } })
        weak let released = receiver
        receiver = nil
        #expect(released == nil, "the session kept the receiver alive")
        await a.invalidate()
        await b.invalidate()
    }

    @Test(.timeLimit(.minutes(1)))
    func sizeLimitsAndUnconnectedPeersFailBeforeSending() async throws {
        let (a, _, b, rb) = try await connectedPair("limit")
        try a.send(Data(repeating: 1, count: 89_088), toPeers: [b.peerID], with: .reliable)
        #expect(throws: GKSessionError(.dataTooBig, "A reliable message can be at most 89088 bytes (87 KB); this one has 89089.")) {
            try a.send(Data(repeating: 1, count: 89_089), toPeers: [b.peerID], with: .reliable)
        }
        try a.send(Data(repeating: 2, count: 1000), toPeers: [b.peerID], with: .unreliable)
        // The seed advises unreliable messages under 1000 bytes but allows 87 KB: larger ones go on the reliable
        // connection.
        try a.send(Data(repeating: 3, count: 89_088), toPeers: [b.peerID], with: .unreliable)
        #expect(throws: GKSessionError(.dataTooBig, "An unreliable message can be at most 89088 bytes (87 KB); this one has 89089.")) {
            try a.send(Data(repeating: 3, count: 89_089), toPeers: [b.peerID], with: .unreliable)
        }
        #expect(throws: GKSessionError.self) { try a.send(Data([1]), toPeers: [b.peerID, "stranger"], with: .reliable) }
        #expect(throws: GKSessionError.self) { try a.send(Data([1]), toPeers: ["stranger"], with: .unreliable) }
        #expect(throws: GKSessionError.self) { try a.send(Data(repeating: 3, count: 5000), toPeers: ["stranger"], with: .unreliable) }
        try await waitUntil("B got the three messages") { rb.messages.count == 3 }
        // UDP may overtake TCP, so only the contents are checked.
        #expect(
            Set(rb.messages.map(\.data)) == [Data(repeating: 1, count: 89_088), Data(repeating: 2, count: 1000), Data(repeating: 3, count: 89_088)])
        await a.invalidate()
        await b.invalidate()
    }

    /// Accepting makes the peer connected at once, so a send right after it must not overtake the accept frame, even
    /// when the session's event loop is busy (it did: the receiver, still connecting, took the data for a protocol
    /// violation and closed the connection).
    @Test(.timeLimit(.minutes(1)))
    func dataSentRightAfterAcceptingFollowsTheAccept() async throws {
        let id = uniqueSessionID("order")
        let loopOfB = Self.busyGroup.next()
        let (a, ra) = try makeSession(id, "Asker", .client)
        let (b, rb) = try makeSession(id, "Accepter", .server, eventLoop: loopOfB)
        a.isAvailable = true
        b.isAvailable = true
        try await waitUntil("the asker finds the accepter") { a.peers(with: .available) == [b.peerID] }
        a.connect(toPeer: b.peerID, withTimeout: 20)
        try await waitUntil("the accepter is asked") { rb.has(.request(a.peerID)) }
        loopOfB.execute { usleep(100_000) }  // B's loop runs nothing else for 0.1 s: what a loaded machine does
        try b.acceptConnection(fromPeer: a.peerID)
        try b.send(Data("first".utf8), toPeers: [a.peerID], with: .reliable)
        try b.sendData(toAllPeers: Data("second".utf8), with: .reliable)
        try await waitUntil("the asker got both messages") { ra.messageCount == 2 }
        #expect(ra.messages.map { String(decoding: $0.data, as: UTF8.self) } == ["first", "second"])
        #expect(ra.has(.state(b.peerID, .connected)))
        #expect(!ra.events.contains { if case .failed = $0 { true } else { false } })
        #expect(a.peers(with: .connected) == [b.peerID])
        await a.invalidate()
        await b.invalidate()
    }

    @Test(.timeLimit(.minutes(2)))
    func subsetSendsReachOnlyTheChosenPeers() async throws {
        let id = uniqueSessionID("subset")
        let (hub, _) = try makeSession(id, "Hub", .server)
        var spokes: [(GKSession, SessionRecorder)] = []
        for name in ["One", "Two", "Three"] { spokes.append(try makeSession(id, name, .client)) }
        hub.isAvailable = true
        for (spoke, recorder) in spokes {
            spoke.isAvailable = true
            recorder.answerRequests(true)
        }
        let hubRecorder = SessionRecorder()
        hubRecorder.attach(to: hub)
        hubRecorder.answerRequests(true)
        // Three discoveries and three handshakes at once: generous deadlines, as CI runs this beside CPU-heavy suites
        // on two cores (it once missed the 5 s connect timeout and the 10 s wait there).
        for (spoke, _) in spokes {
            try await waitUntil("\(spoke.displayName) finds the hub", within: .seconds(30)) { spoke.peers(with: .available) == [hub.peerID] }
            spoke.connect(toPeer: hub.peerID, withTimeout: 20)
        }
        try await waitUntil("the hub is connected to all three", within: .seconds(30)) { hub.peers(with: .connected).count == 3 }
        try hub.send(Data("to one and three".utf8), toPeers: [spokes[0].0.peerID, spokes[2].0.peerID], with: .reliable)
        try hub.sendData(toAllPeers: Data("everyone".utf8), with: .reliable)
        try await waitUntil("one and three got both messages, two got one") {
            spokes[0].1.messages.count == 2 && spokes[2].1.messages.count == 2 && spokes[1].1.messages.count == 1
        }
        #expect(spokes[1].1.messages.map { String(decoding: $0.data, as: UTF8.self) } == ["everyone"])
        #expect(spokes[0].1.messages.map { String(decoding: $0.data, as: UTF8.self) } == ["to one and three", "everyone"])
        await hub.invalidate()
        for (spoke, _) in spokes { await spoke.invalidate() }
    }

    @Test(.timeLimit(.minutes(1)))
    func unreliableDatagramsArriveAndForgedOnesAreDropped() async throws {
        let (a, ra, b, rb) = try await connectedPair("udp")
        try a.send(Data("ping".utf8), toPeers: [b.peerID], with: .unreliable)
        try await waitUntil("B got the ping") { rb.messages.contains { $0.data == Data("ping".utf8) && $0.peer == a.peerID } }
        try b.sendData(toAllPeers: Data("pong".utf8), with: .unreliable)
        try await waitUntil("A got the pong") { ra.messages.contains { $0.data == Data("pong".utf8) } }

        // A datagram with the right shape but a made-up receiver id and key, sent to B's UDP port.
        var forged = [UInt8](repeating: 0, count: UnreliableDatagram.length(payloadCount: 6))
        forged.withUnsafeMutableBytes { bytes in
            UnreliableDatagram(receiverID: .random(in: 0...UInt64.max), counter: 1)
                .seal(Data("forged".utf8), with: ChaChaPolyCipher(key: SymmetricKey(size: .bits256)), into: bytes)
        }
        let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: Int(b.datagramPort))
        try await channel.writeAndFlush(AddressedEnvelope(remoteAddress: target, data: channel.allocator.buffer(bytes: forged))).get()
        try await channel.writeAndFlush(AddressedEnvelope(remoteAddress: target, data: channel.allocator.buffer(bytes: [1, 2, 3]))).get()
        try await waitUntil("B dropped both bad datagrams") { b.droppedDatagramCount == 2 }
        #expect(!rb.messages.contains { $0.data == Data("forged".utf8) })
        try await channel.close().get()
        await a.invalidate()
        await b.invalidate()
    }

    @Test(.timeLimit(.minutes(1)))
    func unreliableFloodIsReadWhileItLasts() async throws {
        // Both sessions on one event loop: sending must leave that loop free to read its sockets, so datagrams (and a
        // reliable message coming the other way) arrive while the flood goes on, not only after it ends.
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let (a, ra, b, rb) = try await connectedPair("flood", eventLoopOfA: loop, eventLoopOfB: loop)
        let wanted = 2_000
        let cap = 2_000_000
        var sent = 0
        var replied = false
        while sent < cap {
            withUnsafeBytes(of: UInt64(sent).bigEndian) { try? a.send(Data($0), toPeers: [b.peerID], with: .unreliable) }
            sent += 1
            guard sent % 1_000 == 0 else { continue }
            if !replied {
                try b.send(Data("still reading".utf8), toPeers: [a.peerID], with: .reliable)
                replied = true
            }
            if rb.messageCount >= wanted && ra.messageCount == 1 { break }
        }
        #expect(sent < cap, "the flood ended before \(wanted) datagrams and the reliable reply arrived")
        #expect(ra.messages.map(\.data) == [Data("still reading".utf8)])
        let indices = rb.messages.map { message in message.data.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        #expect(rb.messages.allSatisfy { $0.data.count == 8 && $0.peer == a.peerID })
        #expect(Set(indices).count == indices.count && indices.allSatisfy { $0 < UInt64(sent) })
        await a.invalidate()
        await b.invalidate()
    }

    @Test(.timeLimit(.minutes(1)))
    func unreliableSendsDoNotWaitForTheSendersEventLoop() async throws {
        // A's event loop (one of its own, never B's) is kept busy while A sends: the datagrams still go out at once.
        let loop = Self.separateGroup.next()
        let (a, _, b, rb) = try await connectedPair("busyloop", eventLoopOfA: loop)
        let count = 100
        let started = Atomic<Bool>(false)
        let busy = loop.submit {
            started.store(true, ordering: .relaxed)
            let deadline = ContinuousClock.now + .seconds(10)
            while rb.messageCount < count, ContinuousClock.now < deadline { usleep(1_000) }
            return rb.messageCount
        }
        try await waitUntil("A's event loop is busy") { started.load(ordering: .relaxed) }
        for index in 0..<count { try a.send(Data([UInt8(index)]), toPeers: [b.peerID], with: .unreliable) }
        let receivedWhileBusy = try await busy.get()
        #expect(receivedWhileBusy == count)
        #expect(Set(rb.messages.map(\.data)) == Set((0..<count).map { Data([UInt8($0)]) }))
        await a.invalidate()
        await b.invalidate()
    }

    /// An event loop group apart from NIO's shared one, for the process's lifetime (like the shared one).
    private static let separateGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    /// An event loop group only `dataSentRightAfterAcceptingFollowsTheAccept` blocks.
    private static let busyGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    @Test(.timeLimit(.minutes(1)))
    func disconnectIsSeenByBothSides() async throws {
        let (a, ra, b, rb) = try await connectedPair("bye")
        a.disconnectPeer(fromAllPeers: b.peerID)
        try await waitUntil("B hears A disconnect") { rb.has(.state(a.peerID, .disconnected)) }
        try await waitUntil("A hears itself disconnected from B") { ra.has(.state(b.peerID, .disconnected)) }
        #expect(a.peers(with: .connected).isEmpty && b.peers(with: .connected).isEmpty)
        #expect(throws: GKSessionError.self) { try a.send(Data([1]), toPeers: [b.peerID], with: .reliable) }

        // Reconnect, then disconnect from everyone.
        a.connect(toPeer: b.peerID, withTimeout: 5)
        try await waitUntil("A is connected to B again") { a.peers(with: .connected) == [b.peerID] }
        b.disconnectFromAllPeers()
        try await waitUntil("A is no longer connected") { a.peers(with: .connected).isEmpty }
        try await waitUntil("A heard the second disconnect") { ra.events.filter { $0 == .state(b.peerID, .disconnected) }.count == 2 }
        await a.invalidate()
        await b.invalidate()
    }

    @Test(.timeLimit(.minutes(1)))
    func silentPeerIsDroppedAfterTheDisconnectTimeout() async throws {
        let (a, ra, b, rb) = try await connectedPair("quiet")
        #expect(a.disconnectTimeout == 20)
        a.disconnectTimeout = 1
        b.disconnectTimeout = 60
        b.heartbeatsEnabled = false
        // Silence is counted from b's last heartbeat, which may precede this point by up to 2 s: only the upper
        // bound can be checked here (the exact rule is tested on SessionCore with an explicit clock).
        try await waitUntil("A drops the silent B", within: .seconds(8)) { ra.has(.state(b.peerID, .disconnected)) }
        try await waitUntil("B hears it was dropped", within: .seconds(6)) { rb.has(.state(a.peerID, .disconnected)) }
        await a.invalidate()
        await b.invalidate()
    }

    @Test(.timeLimit(.minutes(1)))
    func malformedFrameClosesOnlyThatPeer() async throws {
        let (a, ra, b, _) = try await connectedPair("junk")
        ra.answerRequests(true)
        // A hand-made peer connects to A's listener, completes the handshake, then sends garbage.
        let raw = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: Int(a.listeningPort)) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        try await raw.executeThenClose { inbound, outbound in
            var peer = RawSessionPeer(inbound: inbound, outbound: outbound)
            try await peer.handshake()
            try await peer.send(.hello(SessionHello(peerID: "raw-peer", displayName: "Raw", udpPort: 9)))
            try await waitUntil("A connected the raw peer") { a.peers(with: .connected).contains("raw-peer") }
            #expect(a.displayName(forPeer: "raw-peer") == "Raw")
            try await peer.send(.data(Data("hi".utf8)))
            try await waitUntil("A got the raw peer's message") { ra.messages.contains { $0.peer == "raw-peer" } }
            try await peer.send(raw: [0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3])
            try await waitUntil("A disconnected the raw peer") { ra.has(.state("raw-peer", .disconnected)) }
            await peer.waitUntilClosed()
        }
        #expect(a.peers(with: .connected) == [b.peerID])
        try a.send(Data("still here".utf8), toPeers: [b.peerID], with: .reliable)
        await a.invalidate()
        await b.invalidate()
    }
}
