import Foundation
import NIOCore
import OpenGameKitSessionWire

/// The peer-to-peer session state machine behind ``GKSession``: discovery results, connection handshakes,
/// heartbeats and timeouts. It owns no socket and no clock; the driver feeds it inputs and carries out the
/// returned ``SessionAction``s in order.
///
/// Handshake (over one TCP connection per peer pair, once the driver has secured it: see ``SessionChannelSecurity``):
/// - The requester opens a connection; once it is secured, it sends `hello` (its peer id, name and UDP port).
/// - The other side reports a connection request, then answers `accept` (its UDP port) or `deny`.
/// - The requester may send `cancel` before the answer; at its deadline it sends `cancel` and reports a timeout.
/// - If both peers ask each other at once, the request of the peer with the smaller peer id wins: the other
///   drops its own request and treats the incoming one as a normal request.
///
/// Once connected, both sides send a heartbeat when they have sent nothing for ``Configuration/heartbeatInterval``
/// and drop the peer when it has sent nothing for ``disconnectTimeout``. Any frame that does not fit the
/// conversation closes that connection.
struct SessionCore: Sendable {
    /// Fixed settings.
    struct Configuration: Sendable {
        /// This session's peer id.
        var peerID: String
        /// This session's display name.
        var displayName: String
        /// The UDP port this session receives unreliable data on.
        var udpPort: UInt16
        /// The most connected peers (16).
        var maxConnectedPeers = SessionLimits.maxConnectedPeers
        /// How long a connection may be idle on our side before a heartbeat is sent.
        var heartbeatInterval: Duration = .seconds(2)
        /// How long an inbound connection may stay silent before its hello.
        var helloTimeout: Duration = .seconds(10)
        /// The connect timeout used when the caller gives none (zero or negative).
        var defaultConnectTimeout: Duration = .seconds(30)
    }

    /// A peer found by discovery.
    struct DiscoveredPeer: Equatable, Sendable {
        /// Its display name.
        var displayName: String
        /// Its IPv4 address.
        var host: String
        /// Its TCP port.
        var port: UInt16
    }

    /// Where this session stands with one peer.
    enum Link: Equatable, Sendable {
        /// We asked to connect; give up at `deadline`.
        case outgoing(ConnectionID, deadline: ContinuousClock.Instant)
        /// The peer asked to connect; waiting for the user's answer.
        case incoming(ConnectionID)
        /// Connected.
        case connected(ConnectionID)

        /// The connection the link uses.
        var connection: ConnectionID {
            switch self {
            case .outgoing(let id, _), .incoming(let id), .connected(let id): id
            }
        }
    }

    /// One TCP connection.
    struct Connection: Sendable {
        /// Who opened it.
        enum Direction: Sendable { case outbound, inbound }
        /// Who opened it.
        var direction: Direction
        /// The peer: known from the start for outbound connections, after the hello for inbound ones.
        var peerID: String?
        /// The peer's IP address.
        var remoteHost: String
        /// Whether our hello went out (outbound only).
        var helloSent = false
        /// The datagram keys, once the connection is secured.
        var datagrams: SessionDatagramKeys?
        /// The peer's UDP port.
        var remoteUDPPort: UInt16?
        /// When the connection was created.
        var openedAt: ContinuousClock.Instant
        /// When the peer last sent anything.
        var lastReceived: ContinuousClock.Instant
        /// When we last sent anything.
        var lastSent: ContinuousClock.Instant
    }

    /// Fixed settings.
    let configuration: Configuration
    /// How long a connected peer may stay silent before it is disconnected.
    var disconnectTimeout: Duration = .seconds(20)
    /// Test hook: when `false`, no heartbeats are sent (a peer that has gone quiet).
    var heartbeatsEnabled = true
    /// Peers found by discovery, by peer id.
    private(set) var discovered: [String: DiscoveredPeer] = [:]
    /// Links with peers, by peer id.
    private(set) var links: [String: Link] = [:]
    /// Open connections.
    private(set) var connections: [ConnectionID: Connection] = [:]
    /// Display names learned from discovery and handshakes.
    private(set) var names: [String: String] = [:]
    /// Unreliable datagrams dropped because they were malformed, forged, altered, replayed or not addressed to a
    /// connected peer's connection.
    private(set) var droppedDatagramCount = 0

    private var nextConnectionNumber = 1

    /// Creates a session core.
    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The number of connected peers.
    var connectedCount: Int { links.values.count { if case .connected = $0 { true } else { false } } }

    private var outgoingCount: Int { links.values.count { if case .outgoing = $0 { true } else { false } } }

    // MARK: Queries

    /// The peers in `state`: available (discovered, no link), connecting (either direction) or connected.
    func peers(with state: GKPeerConnectionState) -> [String] {
        switch state {
        case .available:
            return discovered.keys.filter { links[$0] == nil }.sorted()
        case .connecting:
            return links.compactMap { peer, link in
                switch link {
                case .outgoing, .incoming: peer
                case .connected: nil
                }
            }.sorted()
        case .connected:
            return links.compactMap { peer, link in if case .connected = link { peer } else { nil } }.sorted()
        case .unavailable, .disconnected:
            return []
        }
    }

    /// A peer's display name (this session's own for its own peer id).
    func displayName(for peerID: String) -> String? {
        peerID == configuration.peerID ? configuration.displayName : names[peerID] ?? discovered[peerID]?.displayName
    }

    /// The connection of a connected peer.
    func connectedConnection(of peerID: String) -> ConnectionID? {
        if case .connected(let id)? = links[peerID] { id } else { nil }
    }

    // MARK: Discovery

    /// Discovery found (or updated) a peer. The session's own advertisement is ignored.
    mutating func peerFound(_ peerID: String, displayName: String, host: String, port: UInt16) -> [SessionAction] {
        guard peerID != configuration.peerID, !peerID.isEmpty else { return [] }
        let isNew = discovered[peerID] == nil
        discovered[peerID] = DiscoveredPeer(displayName: displayName, host: host, port: port)
        if names[peerID] == nil || links[peerID] == nil { names[peerID] = displayName }
        guard isNew, links[peerID] == nil else { return [] }
        return [.notify(.stateChanged(peerID: peerID, .available))]
    }

    /// Discovery lost a peer (goodbye or expiry).
    mutating func peerLost(_ peerID: String) -> [SessionAction] {
        guard discovered.removeValue(forKey: peerID) != nil, links[peerID] == nil else { return [] }
        return [.notify(.stateChanged(peerID: peerID, .unavailable))]
    }

    /// Discovery stopped: every discovered peer without a link becomes unavailable.
    mutating func discoveryStopped() -> [SessionAction] {
        discovered.keys.sorted().flatMap { peerLost($0) }
    }

    // MARK: User commands

    /// Asks `peerID` to connect; the answer must come before `timeout` (zero or less: the default).
    mutating func connect(to peerID: String, timeout: Duration, now: ContinuousClock.Instant) -> [SessionAction] {
        guard peerID != configuration.peerID else {
            return [failed(peerID, GKSessionError(.invalidParameter, "A session cannot connect to itself."))]
        }
        switch links[peerID] {
        case .connected?, .outgoing?:
            return []
        case .incoming?:
            return accept(from: peerID, now: now).actions
        case nil:
            break
        }
        guard let target = discovered[peerID] else {
            return [failed(peerID, GKSessionError(.peerNotFound, "Peer \(peerID) is not available."))]
        }
        guard connectedCount + outgoingCount < configuration.maxConnectedPeers else {
            return [failed(peerID, GKSessionError(.sessionFull, "This session already has the maximum of \(configuration.maxConnectedPeers) connected peers."))]
        }
        let id = allocate()
        connections[id] = Connection(direction: .outbound, peerID: peerID, remoteHost: target.host, openedAt: now, lastReceived: now, lastSent: now)
        links[peerID] = .outgoing(id, deadline: now + (timeout > .zero ? timeout : configuration.defaultConnectTimeout))
        return [.notify(.stateChanged(peerID: peerID, .connecting)), .open(id, host: target.host, port: target.port)]
    }

    /// Withdraws a request to `peerID`; the peer forgets it.
    mutating func cancelConnect(to peerID: String) -> [SessionAction] {
        guard case .outgoing(let id, _)? = links[peerID] else { return [] }
        links[peerID] = nil
        let connection = connections.removeValue(forKey: id)
        return (connection?.helloSent == true ? [.send(.cancel, on: id)] : []) + [.close(id)]
    }

    /// Accepts `peerID`'s pending request. Fails if there is none, or if the session is full (then the request is refused).
    mutating func accept(from peerID: String, now: ContinuousClock.Instant) -> (actions: [SessionAction], error: GKSessionError?) {
        guard case .incoming(let id)? = links[peerID], var connection = connections[id] else {
            return ([], GKSessionError(.invalidParameter, "There is no pending connection request from peer \(peerID)."))
        }
        guard connectedCount < configuration.maxConnectedPeers else {
            links[peerID] = nil
            connections[id] = nil
            return (
                [.send(.deny(.full), on: id), .close(id)],
                GKSessionError(.sessionFull, "This session already has the maximum of \(configuration.maxConnectedPeers) connected peers.")
            )
        }
        connection.lastSent = now
        connection.lastReceived = now
        connections[id] = connection
        links[peerID] = .connected(id)
        return (
            [
                .send(.accept(udpPort: configuration.udpPort), on: id),
                .notify(.stateChanged(peerID: peerID, .connected)),
            ], nil
        )
    }

    /// Refuses `peerID`'s pending request.
    mutating func deny(from peerID: String) -> [SessionAction] {
        guard case .incoming(let id)? = links[peerID] else { return [] }
        links[peerID] = nil
        connections[id] = nil
        return [.send(.deny(.declined), on: id), .close(id)]
    }

    /// Disconnects `peerID` (or withdraws or refuses a pending request with it).
    mutating func disconnect(_ peerID: String) -> [SessionAction] {
        switch links[peerID] {
        case .connected(let id)?:
            links[peerID] = nil
            connections[id] = nil
            return [.send(.goodbye, on: id), .close(id), .notify(.stateChanged(peerID: peerID, .disconnected))]
        case .outgoing?:
            return cancelConnect(to: peerID)
        case .incoming?:
            return deny(from: peerID)
        case nil:
            return []
        }
    }

    /// Disconnects every peer and withdraws or refuses every pending request.
    mutating func disconnectAll() -> [SessionAction] {
        links.keys.sorted().flatMap { disconnect($0) }
    }

    /// Checks that every peer in `peerIDs` is connected and returns their connections, marking them as just used.
    mutating func reliableConnections(to peerIDs: [String], now: ContinuousClock.Instant) throws(GKSessionError) -> [ConnectionID] {
        var ids: [ConnectionID] = []
        for peer in peerIDs {
            guard let id = connectedConnection(of: peer) else {
                throw GKSessionError(.notConnected, "Peer \(peer) is not connected to this session.")
            }
            if !ids.contains(id) { ids.append(id) }
        }
        for id in ids { connections[id]?.lastSent = now }
        return ids
    }

    /// Checks that every peer in `peerIDs` is connected and returns where their unreliable messages go, each with a
    /// counter of its own taken from its connection.
    mutating func unreliableTargets(to peerIDs: [String]) throws(GKSessionError) -> [UnreliableTarget] {
        var ids: [(peer: String, id: ConnectionID)] = []
        for peer in peerIDs where !ids.contains(where: { $0.peer == peer }) {
            guard let id = connectedConnection(of: peer), let connection = connections[id], connection.datagrams != nil,
                connection.remoteUDPPort != nil
            else {
                throw GKSessionError(.notConnected, "Peer \(peer) is not connected to this session.")
            }
            ids.append((peer, id))
        }
        var targets: [UnreliableTarget] = []
        for (peer, id) in ids {
            // A connection whose counter ran out (after 2⁶⁴ − 1 datagrams) gets no more: the message is dropped.
            guard let header = connections[id]?.datagrams?.sealer.nextHeader(), let connection = connections[id],
                let port = connection.remoteUDPPort, let cipher = connection.datagrams?.sealer.cipher
            else { continue }
            targets.append(UnreliableTarget(peerID: peer, host: connection.remoteHost, port: port, header: header, cipher: cipher))
        }
        return targets
    }

    // MARK: Connection events

    /// A connection we opened is established; its secure handshake follows. Closes it if the request was withdrawn
    /// meanwhile.
    mutating func outboundOpened(_ id: ConnectionID) -> [SessionAction] {
        guard let peer = connections[id]?.peerID, case .outgoing(id, _)? = links[peer] else { return [.close(id)] }
        return []
    }

    /// A connection's secure handshake ended and both sides hold the same keys: keep its datagram keys, and on a
    /// connection we opened send the hello (or close it if the request was withdrawn meanwhile).
    mutating func secured(_ id: ConnectionID, datagrams: SessionDatagramKeys, now: ContinuousClock.Instant) -> [SessionAction] {
        guard var connection = connections[id], connection.datagrams == nil else { return [.close(id)] }
        connection.datagrams = datagrams
        connections[id] = connection
        guard connection.direction == .outbound else { return [] }
        guard let peer = connection.peerID, case .outgoing(id, _)? = links[peer] else {
            connections[id] = nil
            return [.close(id)]
        }
        connection.helloSent = true
        connection.lastSent = now
        connections[id] = connection
        let hello = SessionHello(peerID: configuration.peerID, displayName: configuration.displayName, udpPort: configuration.udpPort)
        return [.send(.hello(hello), on: id)]
    }

    /// A connection we tried to open could not be established.
    mutating func outboundFailed(_ id: ConnectionID) -> [SessionAction] {
        let name = connections[id]?.peerID.flatMap { displayName(for: $0) } ?? "The peer"
        return lose(id, closing: false, error: GKSessionError(.communicationsFailure, "\(name) could not be reached."))
    }

    /// Someone connected to our listener from `remoteHost`; returns the new connection's id.
    mutating func inboundAccepted(remoteHost: String, now: ContinuousClock.Instant) -> ConnectionID {
        let id = allocate()
        connections[id] = Connection(direction: .inbound, peerID: nil, remoteHost: remoteHost, openedAt: now, lastReceived: now, lastSent: now)
        return id
    }

    /// A connection closed (by the peer, or after an I/O error).
    mutating func connectionClosed(_ id: ConnectionID) -> [SessionAction] {
        let name = connections[id]?.peerID.flatMap { displayName(for: $0) } ?? "The peer"
        let message =
            connections[id]?.datagrams == nil
            ? "\(name) closed the connection during the secure handshake (an OpenGameKit without encryption does)."
            : "\(name) closed the connection."
        return lose(id, closing: false, error: GKSessionError(.communicationsFailure, message))
    }

    /// A connection delivered bytes that are not valid records or frames, or that do not fit the conversation:
    /// close it. A connection we asked for fails with the error `error` stands for.
    mutating func protocolViolation(on id: ConnectionID, error: SessionProtocolError = .unexpectedFrame) -> [SessionAction] {
        let name = connections[id]?.peerID.flatMap { displayName(for: $0) } ?? "The peer"
        return lose(id, closing: true, error: error.sessionError(peerName: name))
    }

    /// A frame arrived on a connection.
    mutating func received(_ frame: SessionFrame, on id: ConnectionID, now: ContinuousClock.Instant) -> [SessionAction] {
        guard var connection = connections[id] else { return [] }
        connection.lastReceived = now
        connections[id] = connection
        switch frame {
        case .hello(let hello):
            return receiveHello(hello, on: id)
        case .accept(let udpPort):
            guard connection.direction == .outbound, connection.helloSent, let peer = connection.peerID,
                case .outgoing(id, _)? = links[peer]
            else { return protocolViolation(on: id) }
            connection.remoteUDPPort = udpPort
            connection.lastSent = now
            connections[id] = connection
            links[peer] = .connected(id)
            return [.notify(.stateChanged(peerID: peer, .connected))]
        case .deny(let reason):
            guard connection.direction == .outbound, connection.helloSent, let peer = connection.peerID else { return protocolViolation(on: id) }
            connections[id] = nil
            var actions: [SessionAction] = [.close(id)]
            if case .outgoing(id, _)? = links[peer] {
                links[peer] = nil
                if reason != .collision { actions.append(failed(peer, reason.error(peerName: displayName(for: peer) ?? peer))) }
            }
            return actions
        case .cancel:
            guard connection.direction == .inbound else { return protocolViolation(on: id) }
            connections[id] = nil
            if let peer = connection.peerID, links[peer] == .incoming(id) { links[peer] = nil }
            return [.close(id)]
        case .data(let bytes):
            guard let peer = connection.peerID, links[peer] == .connected(id) else { return protocolViolation(on: id) }
            return [.notify(.received(bytes, from: peer))]
        case .heartbeat:
            return []
        case .goodbye:
            let name = connection.peerID.flatMap { displayName(for: $0) } ?? "The peer"
            return lose(id, closing: true, error: GKSessionError(.communicationsFailure, "\(name) closed the connection."))
        }
    }

    /// An unreliable datagram arrived: deliver it if it is addressed to a connected peer's connection, opens with
    /// that connection's key and was not seen before; else drop and count it.
    mutating func receivedDatagram(_ bytes: [UInt8], now: ContinuousClock.Instant) -> [SessionAction] {
        receivedDatagram(ByteBuffer(bytes: bytes), now: now)
    }

    /// An unreliable datagram arrived: deliver it if it is addressed to a connected peer's connection, opens with
    /// that connection's key and was not seen before; else drop and count it.
    mutating func receivedDatagram(_ bytes: ByteBuffer, now: ContinuousClock.Instant) -> [SessionAction] {
        guard let header = UnreliableDatagram(header: bytes),
            let id = connections.first(where: { $0.value.datagrams?.opener.receiverID == header.receiverID })?.key,
            let peer = connections[id]?.peerID, links[peer] == .connected(id),
            let payload = connections[id]?.datagrams?.opener.open(bytes, header: header)
        else {
            droppedDatagramCount += 1
            return []
        }
        connections[id]?.lastReceived = now
        return [.notify(.received(payload, from: peer))]
    }

    /// Advances timers: connect timeouts, heartbeats, the disconnect timeout and silent inbound connections.
    mutating func tick(now: ContinuousClock.Instant) -> [SessionAction] {
        var actions: [SessionAction] = []
        for (peer, link) in links.sorted(by: { $0.key < $1.key }) {
            switch link {
            case .outgoing(let id, let deadline) where now >= deadline:
                links[peer] = nil
                let connection = connections.removeValue(forKey: id)
                if connection?.helloSent == true { actions.append(.send(.cancel, on: id)) }
                actions.append(.close(id))
                actions.append(failed(peer, GKSessionError(.timedOut, "\(displayName(for: peer) ?? peer) did not answer in time.")))
            case .connected(let id):
                guard let connection = connections[id] else { continue }
                if now - connection.lastReceived > disconnectTimeout {
                    links[peer] = nil
                    connections[id] = nil
                    actions += [.close(id), .notify(.stateChanged(peerID: peer, .disconnected))]
                } else if heartbeatsEnabled, now - connection.lastSent >= configuration.heartbeatInterval {
                    connections[id]?.lastSent = now
                    actions.append(.send(.heartbeat, on: id))
                }
            default:
                continue
            }
        }
        for (id, connection) in connections.sorted(by: { $0.key < $1.key })
        where connection.direction == .inbound && connection.peerID == nil && now - connection.openedAt > configuration.helloTimeout {
            connections[id] = nil
            actions.append(.close(id))
        }
        return actions
    }

    // MARK: Internals

    private mutating func receiveHello(_ hello: SessionHello, on id: ConnectionID) -> [SessionAction] {
        guard var connection = connections[id], connection.direction == .inbound, connection.peerID == nil else {
            return protocolViolation(on: id)
        }
        let remote = hello.peerID
        var actions: [SessionAction] = []
        func refuse(_ reason: DenyReason) -> [SessionAction] {
            connections[id] = nil
            return actions + [.send(.deny(reason), on: id), .close(id)]
        }
        guard remote != configuration.peerID, !remote.isEmpty else { return refuse(.busy) }
        switch links[remote] {
        case .connected?, .incoming?:
            return refuse(.busy)
        case .outgoing(let mine, _)?:
            if configuration.peerID < remote { return refuse(.collision) }
            // Both asked at once and the peer's id is smaller: its request wins, ours is withdrawn.
            links[remote] = nil
            if connections.removeValue(forKey: mine)?.helloSent == true { actions.append(.send(.cancel, on: mine)) }
            actions.append(.close(mine))
        case nil:
            break
        }
        guard connectedCount < configuration.maxConnectedPeers else { return refuse(.full) }
        connection.peerID = remote
        connection.remoteUDPPort = hello.udpPort
        connections[id] = connection
        names[remote] = hello.displayName
        links[remote] = .incoming(id)
        actions.append(.notify(.connectionRequest(peerID: remote)))
        return actions
    }

    /// Forgets a connection and reports what that means for its peer.
    private mutating func lose(_ id: ConnectionID, closing: Bool, error: GKSessionError) -> [SessionAction] {
        var actions: [SessionAction] = closing ? [.close(id)] : []
        guard let connection = connections.removeValue(forKey: id) else { return actions }
        if let peer = connection.peerID, let link = links[peer], link.connection == id {
            links[peer] = nil
            switch link {
            case .connected: actions.append(.notify(.stateChanged(peerID: peer, .disconnected)))
            case .outgoing: actions.append(failed(peer, error))
            case .incoming: break
            }
        }
        return actions
    }

    private func failed(_ peerID: String, _ error: GKSessionError) -> SessionAction {
        .notify(.connectionFailed(peerID: peerID, error))
    }

    private mutating func allocate() -> ConnectionID {
        defer { nextConnectionNumber += 1 }
        return ConnectionID(rawValue: nextConnectionNumber)
    }
}
