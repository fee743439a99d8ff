import ArgumentParser
import Foundation
import GameCenterProtocol
import GameCenterServer
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// The load part of `gamecenter bench relay`: every preloaded player connects to the relay as a lean client (its
/// WebSocket for the welcome and key, datagrams from a few shared UDP sockets) and sends 100-byte unreliable
/// messages to its whole match at a fixed rate; every arrival's one-way latency is recorded.
enum RelayLoad {
    struct Figures {
        var sentPerSecond: Double
        var deliveredPerSecond: Double
        var lossPercent: Double
        var p50: Double
        var p99: Double
        var cpuCores: Double
    }

    /// A member as the load generator knows it after its welcome.
    struct Member {
        var connectionID: UInt64
        var key: RelayKey
        var counter: UInt64 = 0
        var replay = ReplayWindow()
    }

    static let socketCount = 4

    static func run(server: BenchServer, preload: RelayPreload, hertz: Double, seconds: Double) async throws -> Figures {
        let count = preload.matches * preload.playersPerMatch
        let welcomes = try await connectAll(server: server, preload: preload)
        let sockets = try await (0..<socketCount).asyncMap { _ in try await LoadSocket.open(relayPort: server.udpPort) }
        for (index, welcome) in welcomes.enumerated() {
            sockets[index % socketCount].add(Member(connectionID: welcome.connectionID, key: welcome.key))
        }
        for socket in sockets { try await socket.probeAll() }
        try await Task.sleep(for: .milliseconds(500))

        let interval = 1 / hertz
        for socket in sockets { socket.startSending(every: interval) }
        try await Task.sleep(for: .seconds(2))
        for socket in sockets { socket.resetCounts() }
        let cpuStart = ProcessCPU.seconds()
        let start = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        let elapsed = secondsSince(start)
        let cpu = ProcessCPU.seconds() - cpuStart
        let snapshots = sockets.map { $0.snapshot() }
        for socket in sockets { socket.stop() }
        let sent = snapshots.reduce(0) { $0 + $1.sent }
        let delivered = snapshots.reduce(0) { $0 + $1.delivered }
        let latencies = snapshots.flatMap(\.latencies).sorted()
        let expected = Double(sent * (preload.playersPerMatch - 1))
        _ = count
        return Figures(sentPerSecond: Double(sent) / elapsed, deliveredPerSecond: Double(delivered) / elapsed,
                       lossPercent: expected > 0 ? max(0, 1 - Double(delivered) / expected) * 100 : 0,
                       p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), cpuCores: cpu / elapsed)
    }

    /// Opens every player's relay WebSocket (kept open until the process ends) and returns the welcomes in player order.
    static func connectAll(server: BenchServer, preload: RelayPreload) async throws -> [RelayWelcome] {
        let count = preload.matches * preload.playersPerMatch
        var welcomes = [RelayWelcome?](repeating: nil, count: count)
        for batch in stride(from: 1, through: count, by: 200) {
            try await withThrowingTaskGroup(of: (Int, RelayWelcome).self) { group in
                for index in batch..<min(batch + 200, count + 1) {
                    group.addTask { (index, try await connect(server: server, preload: preload, player: index)) }
                }
                for try await (index, welcome) in group { welcomes[index - 1] = welcome }
            }
        }
        return welcomes.compactMap { $0 }
    }

    /// Opens player `player`'s relay WebSocket (kept open until the process ends) and returns its welcome.
    static func connect(server: BenchServer, preload: RelayPreload, player: Int) async throws -> RelayWelcome {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(preload.token(player))"
        headers[HTTPField.Name("X-GameCenter-Bundle-ID")!] = preload.bundleID
        headers[HTTPField.Name("X-GameCenter-Environment")!] = "sandbox"
        let match = (player - 1) / preload.playersPerMatch + 1
        let url = "ws://127.0.0.1:\(server.port)/v1/matches/\(preload.matchID(match))/relay"
        let (welcomes, welcome) = AsyncStream.makeStream(of: RelayWelcome.self)
        Task {
            _ = try? await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: headers),
                                                   logger: Logger(label: "relay-load")) { inbound, _, _ in
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    if case .binary(let buffer) = message, case .welcome(let received)? = try? RelayServerFrame.read(from: buffer) {
                        welcome.yield(received)
                    }
                }
            }
            welcome.finish()
        }
        for await received in welcomes { return received }
        throw ValidationError("player \(player) got no relay welcome")
    }
}

/// One shared UDP socket of the load generator and the members that send from it; all its state lives on the
/// socket's event loop.
final class LoadSocket: @unchecked Sendable {
    private let channel: any Channel
    private let relay: SocketAddress
    private var members: [RelayLoad.Member] = []
    private var byConnection: [UInt64: Int] = [:]
    private var sent = 0
    private var delivered = 0
    private var latencies: [Double] = []
    private var timer: RepeatedTask?
    private var phase = 0
    private let origin = NIODeadline.now()

    private init(channel: any Channel, relay: SocketAddress) {
        self.channel = channel
        self.relay = relay
    }

    static func open(relayPort: Int) async throws -> LoadSocket {
        let relay = try SocketAddress(ipAddress: "127.0.0.1", port: relayPort)
        let handler = LoadReceiver()
        let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.datagramVectorReadMessageCount, value: 32)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 32 * 2048))
            .channelOption(.socketOption(.so_rcvbuf), value: 8 << 20)
            .channelOption(.socketOption(.so_sndbuf), value: 8 << 20)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler) } }
            .bind(host: "127.0.0.1", port: 0).get()
        let socket = LoadSocket(channel: channel, relay: relay)
        handler.socket = socket
        return socket
    }

    /// Adds a member (before sending starts).
    func add(_ member: RelayLoad.Member) {
        byConnection[member.connectionID] = members.count
        members.append(member)
    }

    /// Sends one probe per member, so that the relay learns this socket's address for each connection.
    func probeAll() async throws {
        try await channel.eventLoop.submit { [self] in
            for i in members.indices { write(i, kind: .clientProbe, body: ByteBuffer()) }
            channel.flush()
        }.get()
    }

    /// Each member sends one message to its whole match every `interval` seconds, spread over 10 ms ticks.
    func startSending(every interval: Double) {
        let ticks = max(1, Int((interval / 0.01).rounded()))
        channel.eventLoop.execute { [self] in
            timer = channel.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(10), delay: .milliseconds(10)) { [self] _ in
                let now = NIODeadline.now().uptimeNanoseconds
                var body = ByteBuffer()
                for i in members.indices where i % ticks == phase {
                    body.clear()
                    body.writeInteger(UInt8(0))   // recipients: everyone
                    body.writeInteger(now)
                    body.writeRepeatingByte(7, count: 92)
                    write(i, kind: .clientData, body: body)
                    sent += 1
                }
                phase = (phase + 1) % ticks
                channel.flush()
            }
        }
    }

    private func write(_ i: Int, kind: RelayDatagramKind, body: ByteBuffer) {
        members[i].counter += 1
        var datagram = channel.allocator.buffer(capacity: body.readableBytes + 40)
        RelayDatagram.seal(RelayDatagramHeader(kind: kind, connectionID: members[i].connectionID, counter: members[i].counter),
                           body: body, key: members[i].key, into: &datagram)
        channel.write(AddressedEnvelope(remoteAddress: relay, data: datagram), promise: nil)
    }

    /// A datagram from the relay (on the event loop).
    fileprivate func received(_ datagram: ByteBuffer) {
        guard let header = RelayDatagram.peekHeader(datagram), header.kind == .serverData, let i = byConnection[header.connectionID],
              let (_, body) = try? RelayDatagram.open(datagram, key: members[i].key), members[i].replay.accept(header.counter),
              let (_, payload) = try? RelayDatagram.readServerDataBody(body), let sentAt = payload.getInteger(at: payload.readerIndex, as: UInt64.self)
        else { return }
        delivered += 1
        latencies.append(Double(NIODeadline.now().uptimeNanoseconds &- sentAt) / 1e9)
    }

    func resetCounts() {
        try? channel.eventLoop.submit { [self] in
            sent = 0
            delivered = 0
            latencies.removeAll(keepingCapacity: true)
        }.wait()
    }

    func snapshot() -> (sent: Int, delivered: Int, latencies: [Double]) {
        (try? channel.eventLoop.submit { [self] in (sent, delivered, latencies) }.wait()) ?? (0, 0, [])
    }

    func stop() {
        try? channel.eventLoop.submit { [self] in timer?.cancel() }.wait()
        channel.close(promise: nil)
    }
}

/// Hands the socket's datagrams to its ``LoadSocket``.
private final class LoadReceiver: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    weak var socket: LoadSocket?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        socket?.received(unwrapInboundIn(data).data)
    }
}

extension Sequence {
    /// `map` with an async transform, in order.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
