import ArgumentParser
import Foundation
import GameCenterProtocol
import GameCenterServer
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The load part of `gamecenter-bench relay`: every preloaded player connects to the relay as a lean client (its
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
        /// CPU of the server's UDP receive threads (they open, forward, seal and send every datagram).
        var relayCores: Double
        /// CPU of the load generator's sending and receiving threads.
        var generatorCores: Double
    }

    /// CPU seconds so far of the relay's UDP threads and of the load generator's threads.
    private static func threadCPU() -> (relay: Double, generator: Double) {
        (ThreadCPU.seconds(named: "gamecenter UDP"), ThreadCPU.seconds(named: "load send") + ThreadCPU.seconds(named: "load receive"))
    }

    /// A member as the load generator knows it after its welcome.
    struct Member {
        var connectionID: UInt64
        var key: RelayKey
        var counter: UInt64 = 0
    }

    static let socketCount = 4

    static func run(server: BenchServer, preload: RelayPreload, hertz: Double, seconds: Double) async throws -> Figures {
        let welcomes = try await connectAll(server: server, preload: preload)
        let sockets = try (0..<socketCount).map { _ in try LoadSocket.open(relayPort: server.udpPort) }
        for (index, welcome) in welcomes.enumerated() {
            sockets[index % socketCount].add(Member(connectionID: welcome.connectionID, key: welcome.key))
        }
        for socket in sockets { socket.probeAll() }
        try await Task.sleep(for: .milliseconds(500))

        let interval = 1 / hertz
        for socket in sockets { socket.start(every: interval) }
        try await Task.sleep(for: .seconds(2))
        for socket in sockets { socket.resetCounts() }
        let cpuStart = ProcessCPU.seconds()
        let threadsStart = threadCPU()
        let start = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        let elapsed = secondsSince(start)
        let cpu = ProcessCPU.seconds() - cpuStart
        let threadsEnd = threadCPU()
        let snapshots = sockets.map { $0.snapshot() }
        for socket in sockets { socket.stop() }
        let sent = snapshots.reduce(0) { $0 + $1.sent }
        let delivered = snapshots.reduce(0) { $0 + $1.delivered }
        let latencies = snapshots.flatMap(\.latencies).sorted()
        let expected = Double(sent * (preload.playersPerMatch - 1))
        return Figures(
            sentPerSecond: Double(sent) / elapsed, deliveredPerSecond: Double(delivered) / elapsed,
            lossPercent: expected > 0 ? max(0, 1 - Double(delivered) / expected) * 100 : 0,
            p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), cpuCores: cpu / elapsed,
            relayCores: (threadsEnd.relay - threadsStart.relay) / elapsed,
            generatorCores: (threadsEnd.generator - threadsStart.generator) / elapsed)
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
            _ = try? await WebSocketClient.connect(
                url: url, configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: headers),
                logger: Logger(label: "relay-load")
            ) { inbound, _, _ in
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

/// One UDP socket of the load generator and the members that send from it, with two threads of its own and no event
/// loop: the sending thread wakes every millisecond and sends that tick's messages with one `sendmmsg`; the receiving
/// thread reads what arrives (in batches while they queue up), opens it and records each message's one-way latency.
final class LoadSocket: Sendable {
    private struct Counts {
        var sent = 0
        var delivered = 0
        var latencies: [Double] = []
    }

    /// What the receiving thread needs of a member: its key and replay window.
    private struct Receiving {
        var connectionID: UInt64
        var key: RelayKey
        var replay = ReplayWindow()
    }

    private let descriptor: CInt
    private let relay: SocketAddress
    private let members: Mutex<[RelayLoad.Member]> = Mutex([])
    private let counts = Mutex(Counts())
    private let stopped = Atomic<Bool>(false)
    private let running = Atomic<Int>(0)

    private init(descriptor: CInt, relay: SocketAddress) {
        self.descriptor = descriptor
        self.relay = relay
    }

    deinit {
        close(descriptor)
    }

    static func open(relayPort: Int) throws -> LoadSocket {
        let relay = try SocketAddress(ipAddress: "127.0.0.1", port: relayPort)
        return LoadSocket(descriptor: try openBound().descriptor, relay: relay)
    }

    /// A blocking UDP socket bound to an ephemeral loopback port, with deep buffers and a 0.2 s receive timeout.
    static func openBound() throws -> (descriptor: CInt, address: SocketAddress) {
        let descriptor = socket(AF_INET, CInt(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw ValidationError("cannot open a UDP socket (errno \(errno))") }
        var buffer: CInt = 8 << 20
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &buffer, socklen_t(MemoryLayout<CInt>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &buffer, socklen_t(MemoryLayout<CInt>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in(
            sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")),
            sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else {
            close(descriptor)
            throw ValidationError("cannot bind a UDP socket (errno \(errno))")
        }
        return (descriptor, SocketAddress(address, host: "127.0.0.1"))
    }

    /// Adds a member (before `start`).
    func add(_ member: RelayLoad.Member) {
        members.withLock { $0.append(member) }
    }

    /// Sends one probe per member, so that the relay learns this socket's address for each connection.
    func probeAll() {
        let datagrams = members.withLock { members in
            members.indices.map { (relay, Self.seal(&members[$0], kind: .clientProbe, body: ByteBuffer())) }
        }
        _ = DatagramBatch(slots: 1).send(datagrams, on: descriptor)
    }

    /// Starts both threads: each member sends one message to its whole match every `interval` seconds, spread over
    /// 1 ms ticks.
    func start(every interval: Double) {
        let ticks = max(1, Int((interval / 0.001).rounded()))
        let receiving = members.withLock { members in
            members.map { Receiving(connectionID: $0.connectionID, key: $0.key) }
        }
        running.add(2, ordering: .relaxed)
        Thread { [self] in
            Thread.current.name = "load send"
            sendTicks(ticks)
            running.subtract(1, ordering: .releasing)
        }.start()
        Thread { [self] in
            Thread.current.name = "load receive"
            receive(receiving)
            running.subtract(1, ordering: .releasing)
        }.start()
    }

    private func sendTicks(_ ticks: Int) {
        // Sealed where they are sent from, as the relay does: the generator's cost is not what is measured.
        let outbox = DatagramOutbox()
        guard let relay = DatagramAddress(relay) else { return }
        var payload = [UInt8](repeating: 7, count: 100)
        let size = RelayDatagram.clientDataSize(recipientCount: 0, payloadCount: payload.count)
        var phase = 0
        var next = ContinuousClock.now
        while !stopped.load(ordering: .relaxed) {
            next += .milliseconds(1)
            payload.withUnsafeMutableBytes { $0.storeBytes(of: Monotonic.nanoseconds().bigEndian, as: UInt64.self) }
            payload.withUnsafeBytes { payload in
                members.withLock { members in
                    for i in stride(from: phase, to: members.count, by: ticks) {
                        members[i].counter += 1
                        let header = RelayDatagramHeader(kind: .clientData, connectionID: members[i].connectionID, counter: members[i].counter)
                        let key = members[i].key
                        outbox.append(to: relay, maximumLength: size) { space in
                            RelayDatagram.sealClientData(header, recipients: [], payload: payload, key: key, in: space)
                        }
                    }
                }
            }
            let sent = outbox.count
            _ = outbox.send(on: descriptor)
            counts.withLock { $0.sent += sent }
            phase = (phase + 1) % ticks
            let wait = next - ContinuousClock.now
            if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.attoseconds) / 1e18 + Double(wait.components.seconds)) }
        }
    }

    private func receive(_ members: [Receiving]) {
        // Each member's key and replay window in an array, found by one dictionary lookup per datagram.
        var receiving = members
        let slotOf = Dictionary(uniqueKeysWithValues: members.enumerated().map { ($1.connectionID, $0) })
        let batch = DatagramBatch(slots: 64)
        var latencies: [Double] = []
        var wait = true
        while !stopped.load(ordering: .relaxed) {
            let count = batch.receive(on: descriptor, wait: wait)
            wait = count == 0
            guard count > 0 else { continue }
            let now = Monotonic.nanoseconds()
            latencies.removeAll(keepingCapacity: true)
            for slot in 0..<count {
                guard let (datagram, _) = batch.slot(slot), let header = RelayDatagram.peekHeader(UnsafeRawBufferPointer(datagram)),
                    header.kind == .serverData, let member = slotOf[header.connectionID],
                    let body = RelayDatagram.openInPlace(datagram, header: header, key: receiving[member].key),
                    receiving[member].replay.accept(header.counter),
                    let (_, payload) = RelayDatagram.readServerDataBody(UnsafeRawBufferPointer(body)), payload.count >= 8
                else { continue }
                latencies.append(Double(now &- UInt64(bigEndian: payload.loadUnaligned(as: UInt64.self))) / 1e9)
            }
            counts.withLock { counts in
                counts.delivered += latencies.count
                counts.latencies.append(contentsOf: latencies)
            }
        }
    }

    private static func seal(_ member: inout RelayLoad.Member, kind: RelayDatagramKind, body: ByteBuffer) -> ByteBuffer {
        member.counter += 1
        var datagram = ByteBuffer()
        datagram.reserveCapacity(body.readableBytes + RelayDatagram.headerSize + RelayDatagram.tagSize)
        RelayDatagram.seal(
            RelayDatagramHeader(kind: kind, connectionID: member.connectionID, counter: member.counter),
            body: body, key: member.key, into: &datagram)
        return datagram
    }

    func resetCounts() {
        counts.withLock { $0 = Counts() }
    }

    func snapshot() -> (sent: Int, delivered: Int, latencies: [Double]) {
        counts.withLock { ($0.sent, $0.delivered, $0.latencies) }
    }

    /// Stops both threads and waits for them.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        while running.load(ordering: .acquiring) > 0 { usleep(1_000) }
    }
}

/// A monotonic clock in nanoseconds, comparable across threads (the load's one-way latencies).
enum Monotonic {
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
