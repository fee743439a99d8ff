import Crypto
import Foundation
import GameCenterProtocol
import OpenGameKitSessionWire
import Testing
@testable import OpenGameKit

@Suite("Session state machine")
struct SessionCoreTests {
    let alice = CoreNetwork.peerID(0)
    let bob = CoreNetwork.peerID(1)

    @Test func discoveryReportsAvailableAndUnavailableButNeverSelf() {
        var network = CoreNetwork(count: 2)
        network.on(0) { core, _ in core.peerFound(CoreNetwork.peerID(0), displayName: "Me", host: "node-0", port: 1) }
        #expect(network.events[0].isEmpty)
        network.discoverAll()
        #expect(network.events[0] == [.stateChanged(peerID: bob, .available)])
        network.on(0) { core, _ in core.peerFound(CoreNetwork.peerID(1), displayName: "Node 1", host: "node-1", port: 2) }  // update: no event
        #expect(network.events[0].count == 1)
        #expect(network.nodes[0].peers(with: .available) == [bob])
        #expect(network.nodes[0].displayName(for: bob) == "Node 1")
        network.on(0) { core, _ in core.peerLost(CoreNetwork.peerID(1)) }
        #expect(network.events[0].last == .stateChanged(peerID: bob, .unavailable))
        #expect(network.nodes[0].peers(with: .available).isEmpty)
    }

    @Test func connectAcceptConnectsBothSides() {
        var network = CoreNetwork(count: 2)
        network.discoverAll()
        network.clearEvents()
        network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(1), timeout: .seconds(5), now: now) }
        #expect(network.events[0] == [.stateChanged(peerID: bob, .connecting)])
        #expect(network.events[1] == [.connectionRequest(peerID: alice)])
        #expect(network.nodes[0].peers(with: .connecting) == [bob])
        #expect(network.nodes[1].peers(with: .connecting) == [alice])
        network.on(1) { core, now in
            let (actions, error) = core.accept(from: CoreNetwork.peerID(0), now: now)
            #expect(error == nil)
            return actions
        }
        #expect(network.events[0].last == .stateChanged(peerID: bob, .connected))
        #expect(network.events[1].last == .stateChanged(peerID: alice, .connected))
        #expect(network.nodes[0].peers(with: .connected) == [bob])
        #expect(network.nodes[1].peers(with: .connected) == [alice])
        #expect(network.nodes[0].peers(with: .available).isEmpty)
        // Each side's unreliable target is addressed to the other side's datagram id, with a counter of its own.
        let targets = try? network.nodes[0].unreliableTargets(to: [bob, bob])
        let bobConnection = network.connection(of: 1, to: 0)
        #expect(targets?.count == 1)
        #expect(targets?.first?.header.receiverID == bobConnection.flatMap { network.nodes[1].connections[$0]?.datagrams?.opener.receiverID })
        #expect(targets?.first?.header.counter == 1)
        #expect(targets?.first?.port == 40001)
        #expect((try? network.nodes[0].unreliableTargets(to: [bob]))?.first?.header.counter == 2)
    }

    @Test func denyFailsTheRequester() {
        var network = CoreNetwork(count: 2)
        network.discoverAll()
        network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(1), timeout: .seconds(5), now: now) }
        network.on(1) { core, _ in core.deny(from: CoreNetwork.peerID(0)) }
        guard case .connectionFailed(let peer, let error)? = network.events[0].last else { Issue.record("no failure"); return }
        #expect(peer == bob)
        #expect(error.code == .declined)
        #expect(network.nodes[0].links.isEmpty && network.nodes[1].links.isEmpty)
        #expect(network.nodes[0].connections.isEmpty && network.nodes[1].connections.isEmpty)
        #expect(network.nodes[0].peers(with: .available) == [bob])
    }

    @Test func timeoutSendsCancelAndBothSidesForget() {
        var network = CoreNetwork(count: 2)
        network.discoverAll()
        network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(1), timeout: .seconds(2), now: now) }
        network.advance(.seconds(1))
        #expect(network.nodes[1].peers(with: .connecting) == [alice])
        network.advance(.seconds(1))
        guard case .connectionFailed(_, let error)? = network.events[0].last else { Issue.record("no failure"); return }
        #expect(error.code == .timedOut)
        #expect(network.nodes[1].peers(with: .connecting).isEmpty)
        let (_, error2) = network.nodes[1].accept(from: alice, now: network.now)
        #expect(error2?.code == .invalidParameter)
    }

    @Test func cancelConnectMakesTheOtherSideForget() {
        var network = CoreNetwork(count: 2)
        network.discoverAll()
        network.clearEvents()
        network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(1), timeout: .seconds(5), now: now) }
        network.on(0) { core, _ in core.cancelConnect(to: CoreNetwork.peerID(1)) }
        #expect(network.nodes[1].links.isEmpty)
        #expect(network.nodes[1].connections.isEmpty)
        #expect(network.events[0] == [.stateChanged(peerID: bob, .connecting)])
        #expect(network.events[1] == [.connectionRequest(peerID: alice)])
    }

    @Test func unreachablePeerFails() {
        var network = CoreNetwork(count: 1)
        network.on(0) { core, _ in core.peerFound("ghost", displayName: "Ghost", host: "nowhere", port: 1) }
        network.on(0) { core, now in core.connect(to: "ghost", timeout: .seconds(5), now: now) }
        guard case .connectionFailed("ghost", let error)? = network.events[0].last else { Issue.record("no failure"); return }
        #expect(error.code == .communicationsFailure)
        network.on(0) { core, now in core.connect(to: "unknown", timeout: .seconds(5), now: now) }
        guard case .connectionFailed("unknown", let error2)? = network.events[0].last else { Issue.record("no failure"); return }
        #expect(error2.code == .peerNotFound)
    }

    @Test func simultaneousRequestsResolveToOneConnection() {
        var network = CoreNetwork(count: 2)
        network.discoverAll()
        network.clearEvents()
        network.paused = [0, 1]  // both hellos are "in flight"
        network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(1), timeout: .seconds(5), now: now) }
        network.on(1) { core, now in core.connect(to: CoreNetwork.peerID(0), timeout: .seconds(5), now: now) }
        network.paused = []
        // Deliver both hellos now.
        let helloA = SessionFrame.hello(SessionHello(peerID: alice, displayName: "Node 0", udpPort: 40000))
        let helloB = SessionFrame.hello(SessionHello(peerID: bob, displayName: "Node 1", udpPort: 40001))
        // Node 0 (smaller id) refuses node 1's hello; node 1 drops its own request and reports node 0's.
        let inboundAtZero = network.nodes[0].inboundAccepted(remoteHost: "node-1", now: network.now)
        let refusal = network.nodes[0].received(helloB, on: inboundAtZero, now: network.now)
        #expect(refusal == [.send(.deny(.collision), on: inboundAtZero), .close(inboundAtZero)])
        let inboundAtOne = network.nodes[1].inboundAccepted(remoteHost: "node-0", now: network.now)
        let request = network.nodes[1].received(helloA, on: inboundAtOne, now: network.now)
        #expect(request.last == .notify(.connectionRequest(peerID: alice)))
        #expect(network.nodes[1].links[alice] == .incoming(inboundAtOne))
        #expect(network.nodes[0].peers(with: .connecting) == [bob])
    }

    @Test func disconnectTellsBothSides() {
        var network = connectedPair()
        network.on(0) { core, _ in core.disconnect(CoreNetwork.peerID(1)) }
        #expect(network.events[0].last == .stateChanged(peerID: bob, .disconnected))
        #expect(network.events[1].last == .stateChanged(peerID: alice, .disconnected))
        #expect(network.nodes[1].peers(with: .connected).isEmpty)
    }

    @Test func heartbeatsKeepAConnectionAliveAndSilenceEndsIt() {
        var network = connectedPair()
        network.nodes[0].disconnectTimeout = .seconds(5)
        network.nodes[1].disconnectTimeout = .seconds(5)
        for _ in 0..<40 { network.advance(.milliseconds(500)) }  // 20 s with heartbeats every 2 s
        #expect(network.nodes[0].peers(with: .connected) == [bob])
        #expect(network.nodes[1].peers(with: .connected) == [alice])
        network.nodes[1].heartbeatsEnabled = false
        for _ in 0..<12 { network.advance(.milliseconds(500)) }
        #expect(network.nodes[0].peers(with: .connected).isEmpty)
        #expect(network.events[0].last == .stateChanged(peerID: bob, .disconnected))
        #expect(network.events[1].last == .stateChanged(peerID: alice, .disconnected))  // its connection was closed
    }

    @Test func reliableDataIsDeliveredAndSendsToUnconnectedPeersFail() throws {
        var network = connectedPair()
        let ids = try network.nodes[0].reliableConnections(to: [bob], now: network.now)
        network.run(ids.map { .send(.data(Data([1, 2, 3])), on: $0) }, at: 0)
        #expect(network.events[1].last == .received(Data([1, 2, 3]), from: alice))
        #expect(throws: GKSessionError.self) { try network.nodes[0].reliableConnections(to: [bob, "nobody"], now: network.now) }
        #expect(throws: GKSessionError.self) { try network.nodes[0].unreliableTargets(to: ["nobody"]) }
    }

    @Test func datagramsMustOpenWithTheConnectionsKeyAndArriveOnce() throws {
        var network = connectedPair()
        let target = try #require(try network.nodes[0].unreliableTargets(to: [bob]).first)
        let good = datagram(Data([42]), header: target.header, cipher: target.cipher)
        #expect(network.nodes[1].receivedDatagram(good, now: network.now) == [.notify(.received(Data([42]), from: alice))])
        #expect(network.nodes[1].receivedDatagram(good, now: network.now).isEmpty)  // replayed
        let wrongKey = ChaChaPolyCipher(key: SymmetricKey(size: .bits256))
        let forged = datagram(Data([66]), header: UnreliableDatagram(receiverID: target.header.receiverID, counter: 9), cipher: wrongKey)
        #expect(network.nodes[1].receivedDatagram(forged, now: network.now).isEmpty)
        let elsewhere = datagram(Data([66]), header: UnreliableDatagram(receiverID: target.header.receiverID &+ 1, counter: 9), cipher: target.cipher)
        #expect(network.nodes[1].receivedDatagram(elsewhere, now: network.now).isEmpty)
        var altered = datagram(Data([7, 7]), header: UnreliableDatagram(receiverID: target.header.receiverID, counter: 10), cipher: target.cipher)
        altered[UnreliableDatagram.headerLength] ^= 1
        #expect(network.nodes[1].receivedDatagram(altered, now: network.now).isEmpty)
        #expect(network.nodes[1].receivedDatagram([1, 2, 3], now: network.now).isEmpty)
        #expect(network.nodes[1].droppedDatagramCount == 5)
        // Bob's own datagrams to Alice do not open at Bob (each direction has its key).
        let reflected = try #require(try network.nodes[1].unreliableTargets(to: [alice]).first)
        #expect(network.nodes[1].receivedDatagram(datagram(Data([1]), header: reflected.header, cipher: reflected.cipher), now: network.now).isEmpty)
        #expect(network.nodes[0].receivedDatagram(datagram(Data([1]), header: reflected.header, cipher: reflected.cipher), now: network.now).count == 1)
    }

    @Test func theHelloWaitsForTheSecureHandshake() {
        var network = CoreNetwork(count: 2)
        network.discoverAll()
        network.clearEvents()
        network.handshakesHang = true
        network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(1), timeout: .seconds(5), now: now) }
        #expect(network.events[0] == [.stateChanged(peerID: bob, .connecting)])
        #expect(network.events[1].isEmpty)
        #expect(network.nodes[1].connections.count == 1)
        // A handshake that never ends times out like an unanswered request, without a cancel (no hello went out).
        network.advance(.seconds(5))
        guard case .connectionFailed(bob, let error)? = network.events[0].last else { Issue.record("no failure"); return }
        #expect(error.code == .timedOut)
        #expect(network.nodes[1].connections.isEmpty)  // the close reached it
        // A connection whose handshake never ends is dropped after the hello timeout.
        let silent = network.nodes[1].inboundAccepted(remoteHost: "node-9", now: network.now)
        network.advance(.seconds(11))
        #expect(network.nodes[1].connections[silent] == nil)
    }

    @Test func securityFailuresGiveClearErrors() {
        let cases: [(SessionProtocolError, GKSessionError.Code, String)] = [
            (.authenticationFailed, .authenticationFailed, "different passphrases"),
            (.notAHandshake, .notSupported, "another version"),
            (.incompatibleVersion(3), .notSupported, "another version"),
            (.malformedHandshake, .communicationsFailure, "invalid data"),
        ]
        for (problem, code, words) in cases {
            var network = CoreNetwork(count: 2)
            network.discoverAll()
            network.handshakesHang = true
            network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(1), timeout: .seconds(5), now: now) }
            let id = network.connection(of: 0, to: 1)!
            network.on(0) { core, _ in core.protocolViolation(on: id, error: problem) }
            guard case .connectionFailed(bob, let error)? = network.events[0].last else { Issue.record("no failure for \(problem)"); continue }
            #expect(error.code == code)
            #expect(error.message.contains(words), "\(error.message)")
            #expect(error.message.contains("Node 1"))
            #expect(network.nodes[1].connections.isEmpty)  // closed on the other side too
        }
        // The other side closing during the handshake says so (what a peer without encryption does).
        var network = CoreNetwork(count: 2)
        network.discoverAll()
        network.handshakesHang = true
        network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(1), timeout: .seconds(5), now: now) }
        let inbound = network.nodes[1].connections.keys.first!
        network.on(1) { core, _ in core.protocolViolation(on: inbound, error: .notAHandshake) }
        guard case .connectionFailed(bob, let error)? = network.events[0].last else { Issue.record("no failure"); return }
        #expect(error.message.contains("during the secure handshake"), "\(error.message)")
        // Once connected, a record that does not open disconnects the peer.
        var connected = connectedPair()
        let id = connected.connection(of: 0, to: 1)!
        connected.on(0) { core, _ in core.protocolViolation(on: id, error: .authenticationFailed) }
        #expect(connected.events[0].last == .stateChanged(peerID: bob, .disconnected))
        #expect(connected.events[1].last == .stateChanged(peerID: alice, .disconnected))
    }

    @Test func unexpectedFramesCloseOnlyThatConnection() {
        var network = CoreNetwork(count: 3)
        network.discoverAll()
        for other in [1, 2] {
            network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(other), timeout: .seconds(5), now: now) }
            network.on(other) { core, now in core.accept(from: CoreNetwork.peerID(0), now: now).actions }
        }
        #expect(network.nodes[0].peers(with: .connected).count == 2)
        // Node 1 sends a second hello on an established connection.
        let id = network.connection(of: 0, to: 1)!
        network.on(0) { core, now in
            core.received(.hello(SessionHello(peerID: "x", displayName: "x", udpPort: 1)), on: id, now: now)
        }
        #expect(network.nodes[0].peers(with: .connected) == [CoreNetwork.peerID(2)])
        #expect(network.events[0].last == .stateChanged(peerID: bob, .disconnected))
        #expect(network.events[1].last == .stateChanged(peerID: alice, .disconnected))
    }

    @Test func seventeenthPeerIsRefused() {
        var network = CoreNetwork(count: 18)
        network.discoverAll()
        for other in 1...16 {
            network.on(other) { core, now in core.connect(to: CoreNetwork.peerID(0), timeout: .seconds(5), now: now) }
            network.on(0) { core, now in core.accept(from: CoreNetwork.peerID(other), now: now).actions }
        }
        #expect(network.nodes[0].peers(with: .connected).count == 16)
        network.on(17) { core, now in core.connect(to: CoreNetwork.peerID(0), timeout: .seconds(5), now: now) }
        guard case .connectionFailed(let peer, let error)? = network.events[17].last else { Issue.record("17th not refused"); return }
        #expect(peer == alice)
        #expect(error.code == .sessionFull)
        #expect(error.message.contains("16"))
        // And the full node cannot ask a 17th peer itself.
        network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(17), timeout: .seconds(5), now: now) }
        guard case .connectionFailed(_, let own)? = network.events[0].last else { Issue.record("no local failure"); return }
        #expect(own.code == .sessionFull)
    }

    /// The datagram `header` makes of `payload` sealed with `cipher`.
    private func datagram(_ payload: Data, header: UnreliableDatagram, cipher: ChaChaPolyCipher) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: UnreliableDatagram.length(payloadCount: payload.count))
        bytes.withUnsafeMutableBytes { header.seal(payload, with: cipher, into: $0) }
        return bytes
    }

    private func connectedPair() -> CoreNetwork {
        var network = CoreNetwork(count: 2)
        network.discoverAll()
        network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(1), timeout: .seconds(5), now: now) }
        network.on(1) { core, now in core.accept(from: CoreNetwork.peerID(0), now: now).actions }
        return network
    }
}
