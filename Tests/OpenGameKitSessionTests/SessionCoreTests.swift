import Foundation
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
        // Tokens were exchanged: each side's unreliable target carries the other's local token.
        let target = try? network.nodes[0].unreliableTargets(to: [bob])
        let bobConnection = network.connection(of: 1, to: 0)
        #expect(target?.first?.token == bobConnection.flatMap { network.nodes[1].connections[$0]?.localToken })
        #expect(target?.first?.port == 40001)
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
        let helloA = SessionFrame.hello(
            SessionHello(version: 1, peerID: alice, displayName: "Node 0", token: network.nodes[0].connections.values.first!.localToken, udpPort: 40000))
        let helloB = SessionFrame.hello(
            SessionHello(version: 1, peerID: bob, displayName: "Node 1", token: network.nodes[1].connections.values.first!.localToken, udpPort: 40001))
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

    @Test func datagramsNeedTheRightToken() throws {
        var network = connectedPair()
        let target = try #require(try network.nodes[0].unreliableTargets(to: [bob]).first)
        let good = UnreliableDatagram(token: target.token, payload: Data([42])).encoded()
        #expect(network.nodes[1].receivedDatagram(good, now: network.now) == [.notify(.received(Data([42]), from: alice))])
        let forged = UnreliableDatagram(token: ConnectionToken(bytes: Array(repeating: 0, count: 16))!, payload: Data([66])).encoded()
        #expect(network.nodes[1].receivedDatagram(forged, now: network.now).isEmpty)
        #expect(network.nodes[1].receivedDatagram([1, 2, 3], now: network.now).isEmpty)
        #expect(network.nodes[1].droppedDatagramCount == 2)
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
            core.received(.hello(SessionHello(version: 1, peerID: "x", displayName: "x", token: ConnectionToken.random(), udpPort: 1)), on: id, now: now)
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

    private func connectedPair() -> CoreNetwork {
        var network = CoreNetwork(count: 2)
        network.discoverAll()
        network.on(0) { core, now in core.connect(to: CoreNetwork.peerID(1), timeout: .seconds(5), now: now) }
        network.on(1) { core, now in core.accept(from: CoreNetwork.peerID(0), now: now).actions }
        return network
    }
}
