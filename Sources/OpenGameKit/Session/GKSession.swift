import Dispatch
import Foundation
import GameCenterProtocol
import Logging
import NIOCore
import NIOPosix
import OpenGameKitLAN
import OpenGameKitSessionWire
import Synchronization

/// A peer-to-peer game session on the local network (Game Kit's `GKSession`).
///
/// Sessions with the same session id find each other with standard mDNS/DNS-SD (the service type
/// `_<sessionID>._tcp.local.`, one instance per session named after its display name, the peer id in the TXT
/// record). A server advertises, a client browses, a peer does both. One session connects to another with
/// ``connect(toPeer:withTimeout:)``; the other accepts or denies. Connected peers exchange reliable messages
/// (ordered, exactly once, over TCP, at most 87 KB) and unreliable ones (one UDP datagram up to 1000 bytes; larger
/// ones, up to 87 KB, go on the reliable connection).
///
/// Every connection is encrypted and authenticated: an X25519 key agreement when it opens, then ChaCha20-Poly1305
/// on every frame and datagram, so others on the network can neither read a game's data nor inject any. Anyone who
/// finds the session can still ask to connect; a private game gives its players a shared passphrase
/// (``init(sessionID:displayName:sessionMode:passphrase:)``), and a session then only connects with peers that
/// have the same one. Discovery stays plain DNS-SD: the session's display name and peer id are public.
///
/// Delegate methods and the data handler run on ``delegateQueue`` (the main queue unless changed).
/// The multicast interface is the first non-loopback IPv4 interface with multicast, or the one named by the
/// `OPENGAMEKIT_INTERFACE` environment variable (for example `lo` to play on one machine).
public final class GKSession: Sendable {
    /// The session id shared by all peers of one game (the DNS-SD service name).
    public let sessionID: String
    /// This session's peer id, unique on the network.
    public let peerID: String
    /// This session's name as shown to other players.
    public let displayName: String
    /// Whether this session advertises, browses, or both.
    public let sessionMode: GKSessionMode

    private struct State {
        var core: SessionCore
        var handles: [ConnectionID: ChannelOutbox] = [:]
        weak var delegate: (any GKSessionDelegate)?
        var delegateQueue: DispatchQueue = .main
        var dataHandler: (@Sendable (Data, String, GKSession) -> Void)?
        var isAvailable = false
        var availabilityTask: Task<Void, Never>?
        var isClosed = false
    }

    private let state: Mutex<State>
    private let eventLoop: any EventLoop
    private let listener: any Channel
    private let datagramChannel: any Channel
    private let datagramSender: DatagramSender
    private let discovery: SessionDiscovery
    private let serviceType: ServiceType
    private let tcpPort: UInt16
    private let inbox: SessionInbox
    private let logger: Logger
    private let ticker: Mutex<RepeatedTask?> = Mutex(nil)
    private let passphrase: SessionPassphrase?

    /// Creates a session. `sessionID` `nil` derives one from the app's bundle identifier (or executable name);
    /// `displayName` `nil` uses the host name. Throws ``GKSessionError`` (`invalidParameter`) for a session id
    /// that is not a valid DNS-SD service name, explaining the rule.
    public convenience init(sessionID: String?, displayName: String?, sessionMode: GKSessionMode) throws {
        try self.init(sessionID: sessionID, displayName: displayName, sessionMode: sessionMode, passphrase: nil)
    }

    /// Creates a session for a private game: like ``init(sessionID:displayName:sessionMode:)``, and it connects only
    /// with sessions that have the same `passphrase` (`nil`: none, the same as that initializer).
    ///
    /// The passphrase is compared in Unicode normalization form C and must have 8 to 256 bytes of UTF-8; anything
    /// else throws ``GKSessionError`` (`invalidParameter`). It never crosses the network: it is stretched (scrypt,
    /// about a tenth of a second, here) into a key that every connection's encryption depends on. A connection
    /// between sessions with different passphrases, or with a passphrase on one side only, fails on both sides
    /// within one round trip: the side that asked gets `connectionWithPeerFailed` with `authenticationFailed`, and
    /// the other side hears nothing. Discovery is not hidden: everyone on the network still sees the session.
    public convenience init(sessionID: String?, displayName: String?, sessionMode: GKSessionMode, passphrase: String?) throws {
        let interface = ProcessInfo.processInfo.environment["OPENGAMEKIT_INTERFACE"].flatMap { $0.isEmpty ? nil : $0 }
        try self.init(sessionID: sessionID, displayName: displayName, sessionMode: sessionMode, passphrase: passphrase, interfaceName: interface)
    }

    /// Creates a session on a chosen multicast interface and mDNS port (tests use `lo`), and on `eventLoop` (by
    /// default the next one of NIO's shared group).
    init(
        sessionID: String?,
        displayName: String?,
        sessionMode: GKSessionMode,
        passphrase: String? = nil,
        interfaceName: String?,
        mdnsPort: Int = MulticastSocket.mdnsPort,
        eventLoop: (any EventLoop)? = nil,
        logger: Logger = Logger(label: "OpenGameKit.GKSession")
    ) throws {
        let serviceType: ServiceType
        if let sessionID {
            do {
                serviceType = try ServiceType(sessionID: sessionID)
            } catch {
                throw GKSessionError(.invalidParameter, error.description)
            }
        } else {
            let bundleID = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
            serviceType = ServiceType.derived(fromBundleID: bundleID)
        }
        let stretched = try passphrase.map { passphrase throws(GKSessionError) in try SessionPassphrase(passphrase, sessionID: serviceType.name) }
        let name =
            displayName.flatMap { $0.isEmpty ? nil : $0 }
            ?? {
                let host = ProcessInfo.processInfo.hostName
                return host.isEmpty ? "Player" : host
            }()
        self.serviceType = serviceType
        self.sessionID = serviceType.name
        self.peerID = String(UInt32.random(in: 1...UInt32.max))
        self.displayName = name
        self.sessionMode = sessionMode
        self.passphrase = stretched
        self.logger = logger
        let inbox = SessionInbox()
        self.inbox = inbox
        let eventLoop = eventLoop ?? MultiThreadedEventLoopGroup.singleton.next()
        self.eventLoop = eventLoop
        datagramSender = try DatagramSender(sendBufferBytes: SessionLimits.datagramSocketBufferBytes)

        datagramChannel = try DatagramBootstrap(group: eventLoop)
            .channelOption(.socketOption(.so_rcvbuf), value: SessionLimits.datagramSocketBufferBytes)
            .channelOption(.datagramVectorReadMessageCount, value: SessionLimits.datagramsPerRead)
            .channelOption(.recvAllocator, value: SessionLimits.datagramReceiveAllocator)
            .channelOption(.maxMessagesPerRead, value: SessionLimits.datagramReadsPerWakeUp)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SessionDatagramHandler(inbox: inbox))
                }
            }
            .bind(host: "0.0.0.0", port: 0)
            .wait()
        do {
            listener = try ServerBootstrap(group: eventLoop)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(.recvAllocator, value: SessionLimits.receiveAllocator)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        guard let session = inbox.session else { throw GKSessionError(.cancelled, "The session has ended.") }
                        let (id, outbox) = session.registerInbound(channel)
                        let security = SessionChannelSecurity(role: .responder, passphrase: stretched)
                        try channel.pipeline.syncOperations.addHandler(SessionConnectionHandler(inbox: inbox, id: id, outbox: outbox, security: security))
                    }
                }
                .bind(host: "0.0.0.0", port: 0)
                .wait()
        } catch {
            datagramChannel.close(promise: nil)
            throw error
        }
        let udpPort = UInt16(clamping: datagramChannel.localAddress?.port ?? 0)
        tcpPort = UInt16(clamping: listener.localAddress?.port ?? 0)
        let configuration = SessionCore.Configuration(peerID: peerID, displayName: name, udpPort: udpPort)
        state = Mutex(State(core: SessionCore(configuration: configuration)))
        discovery = SessionDiscovery(serviceType: serviceType, interfaceName: interfaceName, mdnsPort: mdnsPort, logger: logger) { change in
            inbox.session?.handleDiscovery(change)
        }
        inbox.session = self
        let task = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(100), delay: .milliseconds(100)) { [weak self] _ in
            self?.apply { $0.tick(now: .now) }
        }
        ticker.withLock { $0 = task }
    }

    deinit {
        ticker.withLock { $0?.cancel() }
        let (handles, links) = state.withLock { state in (state.handles, state.core.links) }
        for link in links.values {
            guard case .connected(let id) = link, let handle = handles[id] else { continue }
            handle.write(SessionFrame.goodbye.encode)
        }
        for handle in handles.values { handle.closeAfterFlush() }
        listener.close(promise: nil)
        datagramChannel.close(promise: nil)
        let discovery = self.discovery
        Task { await discovery.stop() }
    }

    // MARK: Properties

    /// Whether the session takes part in discovery: advertising (server, peer) and/or browsing (client, peer).
    /// Turning it off sends mDNS goodbye packets, so other peers see this one become unavailable at once.
    public var isAvailable: Bool {
        get { state.withLock { $0.isAvailable } }
        set {
            state.withLock { state in
                guard state.isAvailable != newValue, !state.isClosed else { return }
                state.isAvailable = newValue
                let previous = state.availabilityTask
                state.availabilityTask = Task { [weak self] in
                    await previous?.value
                    if newValue {
                        await self?.startDiscovery()
                    } else {
                        await self?.stopDiscovery()
                    }
                }
            }
        }
    }

    /// How long (in seconds) a connected peer may stay silent — no data and no heartbeat — before it is
    /// disconnected. Default 20. Heartbeats go out every 2 seconds, so keep it above that.
    public var disconnectTimeout: TimeInterval {
        get { state.withLock { Self.seconds($0.core.disconnectTimeout) } }
        set { state.withLock { $0.core.disconnectTimeout = .milliseconds(Int64(max(0, newValue) * 1000)) } }
    }

    /// Receives peer state changes, connection requests and failures (held weakly).
    public weak var delegate: (any GKSessionDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// The queue the delegate and the data handler are called on; the main queue by default.
    public var delegateQueue: DispatchQueue {
        get { state.withLock { $0.delegateQueue } }
        set { state.withLock { $0.delegateQueue = newValue } }
    }

    /// Sets the closure that receives every message from connected peers: the data, the sender's peer id and
    /// this session. `nil` drops incoming messages.
    public func setDataReceiveHandler(_ handler: (@Sendable (Data, String, GKSession) -> Void)?) {
        state.withLock { $0.dataHandler = handler }
    }

    /// The seed's object form of ``setDataReceiveHandler(_:)``: `receiver`'s
    /// ``GKSessionDataReceiver/receiveData(_:fromPeer:inSession:context:)`` gets every message, with `context` as
    /// given here. The session keeps `receiver` weakly, as it does its delegate; `nil` drops incoming messages.
    public func setDataReceiveHandler(_ receiver: (any GKSessionDataReceiver)?, withContext context: (any Sendable)?) {
        guard let receiver else { return setDataReceiveHandler(nil) }
        setDataReceiveHandler { [weak receiver] data, peer, session in
            receiver?.receiveData(data, fromPeer: peer, inSession: session, context: context)
        }
    }

    // MARK: Connecting

    /// Asks an available peer to connect. The peer's delegate gets a connection request; this session's
    /// delegate later gets `.connected`, or `connectionWithPeerFailed` if the peer declines, does not answer
    /// within `timeout` seconds (zero: 30), or cannot be reached.
    public func connect(toPeer peerID: String, withTimeout timeout: TimeInterval) {
        let duration: Duration = timeout > 0 ? .milliseconds(Int64(timeout * 1000)) : .zero
        apply { $0.connect(to: peerID, timeout: duration, now: .now) }
    }

    /// Withdraws a pending request to `peerID`; the other side forgets it.
    public func cancelConnect(toPeer peerID: String) {
        apply { $0.cancelConnect(to: peerID) }
    }

    /// Accepts `peerID`'s pending connection request. Throws if there is none, or if the session already has
    /// 16 connected peers (the request is then refused).
    public func acceptConnection(fromPeer peerID: String) throws {
        var failure: GKSessionError?
        apply { core in
            let (actions, error) = core.accept(from: peerID, now: .now)
            failure = error
            return actions
        }
        if let failure { throw failure }
    }

    /// Declines `peerID`'s pending connection request.
    public func denyConnection(fromPeer peerID: String) {
        apply { $0.deny(from: peerID) }
    }

    // MARK: Sending

    /// Sends `data` to every connected peer (nothing if none is connected).
    public func sendData(toAllPeers data: Data, with mode: GKSendDataMode) throws {
        try send(data, toPeers: nil, with: mode)
    }

    /// Sends `data` to each of `peerIDs`. Throws before sending anything if a peer is not connected, if the
    /// message is larger than 87 × 1024 bytes, or if a peer's reliable send queue is full (reliable messages).
    ///
    /// An unreliable message of at most 1000 bytes (the seed's advice) is one UDP datagram, sent on the calling
    /// thread; one the network does not take at once is dropped. A larger one (up to 87 KB, as the seed allows) does
    /// not fit a datagram, so it travels on the peer's reliable connection instead: it arrives, in order with the
    /// reliable messages, but waits behind them and is not faster than a reliable message; when that peer's send
    /// queue is full it is dropped rather than thrown.
    public func send(_ data: Data, toPeers peerIDs: [String], with mode: GKSendDataMode) throws {
        try send(data, toPeers: Optional(peerIDs), with: mode)
    }

    private func send(_ data: Data, toPeers peerIDs: [String]?, with mode: GKSendDataMode) throws {
        switch mode {
        case .reliable:
            guard data.count <= SessionLimits.maxReliableMessage else {
                throw GKSessionError(
                    .dataTooBig, "A reliable message can be at most \(SessionLimits.maxReliableMessage) bytes (87 KB); this one has \(data.count).")
            }
            let size = SessionRecord.dataOverhead + data.count
            let handles = try state.withLock { state throws(GKSessionError) in
                let peers = peerIDs ?? state.core.peers(with: .connected)
                let ids = try state.core.reliableConnections(to: peers, now: .now)
                return ids.compactMap { state.handles[$0] }
            }
            if handles.contains(where: { $0.pendingBytes.load(ordering: .relaxed) + size > SessionLimits.maxQueuedBytesPerConnection }) {
                throw GKSessionError(
                    .communicationsFailure, "A peer's send queue is full (\(SessionLimits.maxQueuedBytesPerConnection) bytes); try again later.")
            }
            // Each peer's outbox copies the message once, straight into the buffer it will write, and seals it there.
            let frame = SessionFrame.data(data)
            for handle in handles { handle.write(frame.encode) }
        case .unreliable:
            guard data.count <= SessionLimits.maxReliableMessage else {
                throw GKSessionError(
                    .dataTooBig, "An unreliable message can be at most \(SessionLimits.maxReliableMessage) bytes (87 KB); this one has \(data.count).")
            }
            guard data.count <= SessionLimits.maxUnreliableMessage else {
                try sendOnReliableConnections(data, toPeers: peerIDs)
                return
            }
            let targets = try state.withLock { state throws(GKSessionError) in
                try state.core.unreliableTargets(to: peerIDs ?? state.core.peers(with: .connected))
            }
            for target in targets {
                guard let address = try? SocketAddress(ipAddress: target.host, port: Int(target.port)) else { continue }
                if !datagramSender.send(data, to: target, at: address) {
                    logger.debug("the kernel did not take an unreliable datagram; dropped", metadata: [LogKey.peer: "\(target.peerID)"])
                }
            }
        }
    }

    /// An unreliable message too large for one datagram, sent as a data frame on each peer's reliable connection;
    /// dropped for a peer whose send queue is full, as an unreliable message the network does not take.
    private func sendOnReliableConnections(_ data: Data, toPeers peerIDs: [String]?) throws {
        let size = SessionRecord.dataOverhead + data.count
        let handles = try state.withLock { state throws(GKSessionError) in
            let peers = peerIDs ?? state.core.peers(with: .connected)
            return try state.core.reliableConnections(to: peers, now: .now).compactMap { state.handles[$0] }
        }
        let frame = SessionFrame.data(data)
        for handle in handles {
            guard handle.pendingBytes.load(ordering: .relaxed) + size <= SessionLimits.maxQueuedBytesPerConnection else {
                logger.debug("a large unreliable message found the send queue full; dropped")
                continue
            }
            handle.write(frame.encode)
        }
    }

    // MARK: Leaving

    /// Disconnects `peerID`; both sides see `.disconnected` at once.
    public func disconnectPeer(fromAllPeers peerID: String) {
        apply { $0.disconnect(peerID) }
    }

    /// Disconnects every connected peer and withdraws or refuses pending requests.
    public func disconnectFromAllPeers() {
        apply { $0.disconnectAll() }
    }

    // MARK: Queries

    /// A peer's display name (this session's own for its own peer id), or `nil` if the peer is unknown.
    public func displayName(forPeer peerID: String) -> String? {
        state.withLock { $0.core.displayName(for: peerID) }
    }

    /// The peers currently in `state` (`.available`, `.connecting` or `.connected`; the others are empty).
    public func peers(with state: GKPeerConnectionState) -> [String] {
        self.state.withLock { $0.core.peers(with: state) }
    }

    // MARK: Internal

    /// The number of unreliable datagrams dropped (malformed, forged, altered, replayed or for no connected peer).
    var droppedDatagramCount: Int { state.withLock { $0.core.droppedDatagramCount } }

    /// The TCP port this session listens on.
    var listeningPort: UInt16 { tcpPort }

    /// The UDP port this session receives unreliable data on.
    var datagramPort: UInt16 { state.withLock { $0.core.configuration.udpPort } }

    /// Test hook: stop (or resume) sending heartbeats, as a peer that has gone quiet would.
    var heartbeatsEnabled: Bool {
        get { state.withLock { $0.core.heartbeatsEnabled } }
        set { state.withLock { $0.core.heartbeatsEnabled = newValue } }
    }

    /// Ends the session: goodbye to connected peers, goodbye on mDNS, sockets closed. Waits for all of it.
    func invalidate() async {
        let task: Task<Void, Never>? = state.withLock { state in
            state.isClosed = true
            state.isAvailable = false
            return state.availabilityTask
        }
        await task?.value
        await discovery.stop()
        disconnectFromAllPeers()
        ticker.withLock { $0?.cancel() }
        let done = eventLoop.submit {}
        try? await done.get()
        let handles = state.withLock { $0.handles.values }
        for handle in handles { handle.closeAfterFlush() }
        try? await listener.close().get()
        try? await datagramChannel.close().get()
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    /// Runs `body` on the core under the lock. The frames it sends are queued on their connections' outboxes and
    /// the connections it closes are let go before the lock is released, so a frame the core sent (say, the accept
    /// that makes a peer connected) is always ahead of anything a caller sends once it sees the new state. New
    /// connections are opened, and the delegate told, from the event loop.
    private func apply(_ body: (inout SessionCore) -> [SessionAction]) {
        state.withLock { state in
            var opens: [(id: ConnectionID, host: String, port: UInt16)] = []
            var events: [SessionEvent] = []
            for action in body(&state.core) {
                switch action {
                case .send(let frame, let id):
                    state.handles[id]?.write(frame.encode)
                case .close(let id):
                    state.handles.removeValue(forKey: id)?.closeAfterFlush()
                case .open(let id, let host, let port):
                    opens.append((id, host, port))
                case .notify(let event):
                    events.append(event)
                }
            }
            guard !opens.isEmpty || !events.isEmpty else { return }
            eventLoop.execute { [opens, events] in
                for open in opens { self.open(open.id, host: open.host, port: open.port) }
                self.notify(events)
            }
        }
    }

    private func open(_ id: ConnectionID, host: String, port: UInt16) {
        let inbox = self.inbox
        let passphrase = self.passphrase
        ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(10))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.recvAllocator, value: SessionLimits.receiveAllocator)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let session = inbox.session else { throw GKSessionError(.cancelled, "The session has ended.") }
                    let outbox = session.registerOutbound(channel, id: id)
                    let security = SessionChannelSecurity(role: .initiator, passphrase: passphrase)
                    try channel.pipeline.syncOperations.addHandler(SessionConnectionHandler(inbox: inbox, id: id, outbox: outbox, security: security))
                }
            }
            .connect(host: host, port: Int(port))
            .whenComplete { [weak self] result in
                guard let self else {
                    if case .success(let channel) = result { channel.close(promise: nil) }
                    return
                }
                switch result {
                case .success:
                    self.apply { $0.outboundOpened(id) }
                case .failure(let error):
                    self.logger.debug("connect failed", metadata: [LogKey.host: "\(host)", LogKey.port: "\(port)", LogKey.error: "\(error)"])
                    self.state.withLock { _ = $0.handles.removeValue(forKey: id) }
                    self.apply { $0.outboundFailed(id) }
                }
            }
    }

    private func notify(_ events: [SessionEvent]) {
        guard !events.isEmpty else { return }
        let (queue, handler) = state.withLock { ($0.delegateQueue, $0.dataHandler) }
        queue.async {
            for event in events {
                switch event {
                case .received(let data, let peer):
                    handler?(data, peer, self)
                case .stateChanged(let peer, let newState):
                    self.delegate?.session(self, peer: peer, didChange: newState)
                case .connectionRequest(let peer):
                    self.delegate?.session(self, didReceiveConnectionRequestFromPeer: peer)
                case .connectionFailed(let peer, let error):
                    self.delegate?.session(self, connectionWithPeerFailed: peer, withError: error)
                }
            }
        }
    }

    private func startDiscovery() async {
        let advertise = sessionMode != .client
        let browse = sessionMode != .server
        var txt: [String: String?] = [:]
        if displayName.utf8.count <= 200 { txt["name"] = .some(displayName) }
        let registration =
            advertise
            ? ServiceRegistration(serviceType: serviceType, displayName: displayName, port: tcpPort, peerID: peerID, ipv4Addresses: [], extraTXT: txt)
            : nil
        do {
            try await discovery.start(advertising: registration, browse: browse)
        } catch {
            logger.warning("discovery failed to start", metadata: [LogKey.error: "\(error)"])
            let failure = GKSessionError(.communicationsFailure, "Discovery could not start: \(error)")
            let queue = delegateQueue
            queue.async { self.delegate?.session(self, didFailWithError: failure) }
        }
    }

    private func stopDiscovery() async {
        await discovery.stop()
        apply { $0.discoveryStopped() }
    }

    // MARK: Inputs from the edge

    /// A connection to our listener: a new connection in the core and its outbox.
    func registerInbound(_ channel: any Channel) -> (ConnectionID, ChannelOutbox) {
        let host = channel.remoteAddress?.ipAddress ?? ""
        let outbox = ChannelOutbox(channel: channel)
        let id = state.withLock { state in
            let id = state.core.inboundAccepted(remoteHost: host, now: .now)
            state.handles[id] = outbox
            return id
        }
        return (id, outbox)
    }

    /// The outbox of connection `id`, which we are opening on `channel`.
    func registerOutbound(_ channel: any Channel, id: ConnectionID) -> ChannelOutbox {
        let outbox = ChannelOutbox(channel: channel)
        state.withLock { $0.handles[id] = outbox }
        return outbox
    }

    /// Connection `id` is secured: both sides hold the same keys.
    func handleSecured(_ id: ConnectionID, datagrams: SessionDatagramKeys) {
        apply { $0.secured(id, datagrams: datagrams, now: .now) }
    }

    /// Frames that arrived on one connection in one read cycle, in order.
    func handle(_ frames: [SessionFrame], on id: ConnectionID) {
        let now = ContinuousClock.now
        apply { core in frames.flatMap { core.received($0, on: id, now: now) } }
    }

    func handleProtocolViolation(on id: ConnectionID, error: SessionProtocolError) {
        // A connection that cannot be authenticated reaches no delegate when we did not ask for it: say so in the log.
        logger.log(
            level: error == .authenticationFailed ? .warning : .debug, "invalid record or frame; closing connection",
            metadata: [LogKey.connection: "\(id)", LogKey.error: "\(error)"])
        apply { $0.protocolViolation(on: id, error: error) }
    }

    func handleConnectionClosed(_ id: ConnectionID) {
        state.withLock { _ = $0.handles.removeValue(forKey: id) }
        apply { $0.connectionClosed(id) }
    }

    /// Datagrams that arrived in one read cycle, in order.
    func handleDatagrams(_ datagrams: [ByteBuffer]) {
        let now = ContinuousClock.now
        apply { core in datagrams.flatMap { core.receivedDatagram($0, now: now) } }
    }

    func handleDiscovery(_ change: SessionDiscovery.Change) {
        switch change {
        case .found(let peer, let name, let host, let port):
            apply { $0.peerFound(peer, displayName: name, host: host, port: port) }
        case .lost(let peer):
            apply { $0.peerLost(peer) }
        }
    }
}
