import Foundation
@testable import OpenGameKit

/// Test support: several ``SessionCore``s wired together in memory. Actions are carried out at once:
/// `open` connects to the node named by the host (`node-<n>`) and, unless ``handshakesHang``, secures the
/// connection on both ends with freshly agreed keys; `send` delivers the frame to the other end, `close` tells the
/// other end the connection closed, and `notify` is recorded per node.
struct CoreNetwork {
    var nodes: [SessionCore]
    var events: [[SessionEvent]]
    var now = ContinuousClock.now
    /// Nodes whose outgoing frames are dropped (as if still in flight).
    var paused: Set<Int> = []
    /// Whether new connections stay in their secure handshake instead of being secured at once.
    var handshakesHang = false
    private var peerOf: [Endpoint: Endpoint] = [:]

    struct Endpoint: Hashable {
        var node: Int
        var connection: ConnectionID
    }

    init(count: Int, maxConnectedPeers: Int = 16) {
        nodes = (0..<count).map { index in
            var configuration = SessionCore.Configuration(peerID: Self.peerID(index), displayName: "Node \(index)", udpPort: UInt16(40000 + index))
            configuration.maxConnectedPeers = maxConnectedPeers
            return SessionCore(configuration: configuration)
        }
        events = Array(repeating: [], count: count)
    }

    /// Peer ids sort in node order: `peer-000`, `peer-001`, …
    static func peerID(_ index: Int) -> String {
        "peer-" + String(repeating: "0", count: 3 - String(index).count) + String(index)
    }

    /// Makes every node discover every other.
    mutating func discoverAll() {
        for i in nodes.indices {
            for j in nodes.indices where i != j {
                run(nodes[i].peerFound(Self.peerID(j), displayName: "Node \(j)", host: "node-\(j)", port: 1), at: i)
            }
        }
    }

    /// Runs `body` on node `index` and carries out its actions.
    mutating func on(_ index: Int, _ body: (inout SessionCore, ContinuousClock.Instant) -> [SessionAction]) {
        let actions = body(&nodes[index], now)
        run(actions, at: index)
    }

    /// Advances the clock and ticks every node.
    mutating func advance(_ duration: Duration) {
        now += duration
        for index in nodes.indices { on(index) { core, now in core.tick(now: now) } }
    }

    /// Forgets the recorded events.
    mutating func clearEvents() {
        events = Array(repeating: [], count: nodes.count)
    }

    mutating func run(_ actions: [SessionAction], at index: Int) {
        for action in actions {
            switch action {
            case .open(let id, let host, _):
                guard let target = Int(host.dropFirst(5)), nodes.indices.contains(target) else {
                    run(nodes[index].outboundFailed(id), at: index)
                    continue
                }
                let remote = nodes[target].inboundAccepted(remoteHost: "node-\(index)", now: now)
                peerOf[Endpoint(node: index, connection: id)] = Endpoint(node: target, connection: remote)
                peerOf[Endpoint(node: target, connection: remote)] = Endpoint(node: index, connection: id)
                run(nodes[index].outboundOpened(id), at: index)
                guard !handshakesHang else { continue }
                guard let keys = try? SessionKeysFixture() else { preconditionFailure("fresh keys always agree") }
                run(nodes[target].secured(remote, datagrams: keys.responder.datagrams, now: now), at: target)
                run(nodes[index].secured(id, datagrams: keys.initiator.datagrams, now: now), at: index)
            case .send(let frame, let id):
                guard !paused.contains(index), let remote = peerOf[Endpoint(node: index, connection: id)] else { continue }
                run(nodes[remote.node].received(frame, on: remote.connection, now: now), at: remote.node)
            case .close(let id):
                guard let remote = peerOf.removeValue(forKey: Endpoint(node: index, connection: id)) else { continue }
                peerOf[remote] = nil
                run(nodes[remote.node].connectionClosed(remote.connection), at: remote.node)
            case .notify(let event):
                events[index].append(event)
            }
        }
    }

    /// The connection of node `index` to node `other`, for injecting frames.
    func connection(of index: Int, to other: Int) -> ConnectionID? {
        nodes[index].links[Self.peerID(other)]?.connection
    }
}
