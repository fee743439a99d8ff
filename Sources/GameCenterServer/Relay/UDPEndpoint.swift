#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The server's UDP port: unreliable match data for the relay (and, later, voice).
///
/// No event loop: each receive thread blocks in `recvfrom` on a socket of its own, hands the datagram to the relay
/// and sends what the relay answers — a datagram goes through the relay with one thread wake-up and two system
/// calls; under load a thread reads batches with `recvmmsg` and answers each batch with one `sendmmsg`. The sockets
/// share the port (`SO_REUSEPORT`): the kernel keeps each device's datagrams on one socket, so one device's datagrams
/// are handled in order, and devices spread over the threads.
package final class UDPEndpoint: Service {
    /// Datagrams read per system call.
    static let datagramsPerRead = 32
    /// A blocking receive that returns faster than this found its datagram already queued (it did not sleep).
    static let queuedReceive = Duration.microseconds(5)
    /// How long a blocked receive waits before it looks whether the server is stopping (a stop also wakes it).
    static let receiveTimeout = timeval(tv_sec: 0, tv_usec: 250_000)

    /// The bound port (useful with port 0).
    package let port: Int
    private let sockets: [CInt]
    private let relay: RelayService
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let running = Atomic<Int>(0)
    /// Whether the sockets are still open for sends from outside the receive threads.
    private let sideSendsOpen = Mutex(true)

    /// Binds one socket per receive thread (one per core, at most four) to `host:port` and routes the relay's other
    /// sends through the first socket. The receive threads run inside ``run()``.
    init(host: String, port: Int, relay: RelayService, logger: Logger, threads: Int = min(4, ProcessInfo.processInfo.activeProcessorCount)) throws {
        precondition(threads >= 1, "a UDP endpoint needs a receive thread")
        var address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        if port != 0 { try Self.checkFree(address) }
        var sockets: [CInt] = []
        do {
            sockets.append(try Self.bind(address))
            // The others bind the port the first one got (with port 0).
            address = try Self.localAddress(of: sockets[0])
            while sockets.count < threads { sockets.append(try Self.bind(address)) }
        } catch {
            for socket in sockets { close(socket) }
            throw error
        }
        self.sockets = sockets
        self.port = address.port ?? 0
        self.relay = relay
        self.logger = logger
        relay.useDatagramSender(port: self.port) { [weak self] datagrams in self?.sendFromElsewhere(datagrams) }
    }

    deinit {
        // An endpoint that never ran still owns its sockets.
        sideSendsOpen.withLock { open in
            guard open else { return }
            for socket in sockets { close(socket) }
        }
    }

    /// Receives on every socket (a thread each) until the server shuts down, then stops the threads, waits for
    /// them, and closes the sockets.
    package func run() async throws {
        for socket in sockets { startReceiving(on: socket) }
        try? await gracefulShutdown()
        stopping.store(true, ordering: .relaxed)
        // Wakes receives blocked in the kernel at once (the receive timeout would within 0.25 s anyway).
        for socket in sockets { _ = shutdown(socket, CInt(SHUT_RDWR)) }
        while running.load(ordering: .acquiring) > 0 { try? await Task.sleep(for: .milliseconds(5)) }
        sideSendsOpen.withLock { open in
            open = false
            for socket in sockets { close(socket) }
        }
    }

    private func startReceiving(on socket: CInt) {
        running.add(1, ordering: .relaxed)
        let thread = Thread { [self] in
            // Named from inside: Linux applies a name only to the running thread (as `top -H` and `perf` show it).
            Thread.current.name = "gamecenter UDP"
            let batch = DatagramBatch(slots: Self.datagramsPerRead)
            let outgoing = DatagramOutbox()
            // Light traffic: one blocking `recvfrom` per datagram (it sleeps until the datagram comes). When it finds one
            // already waiting, traffic is heavy: batches are read without blocking until none is left.
            var wait = true
            while !stopping.load(ordering: .relaxed) {
                let started = ContinuousClock.now
                let count = batch.receive(on: socket, wait: wait)
                wait = wait ? ContinuousClock.now - started > Self.queuedReceive : count == 0
                for slot in 0..<count {
                    if let (bytes, from) = batch.slot(slot) {
                        relay.receiveDatagram(bytes, from: from, into: outgoing)
                    } else {
                        relay.statistics.add(.datagramsMalformed)
                    }
                }
                guard !outgoing.isEmpty else { continue }
                let dropped = outgoing.send(on: socket)
                if dropped > 0 { relay.statistics.add(.datagramsNotSent, dropped) }
            }
            logger.debug("UDP receive thread stopped")
            running.subtract(1, ordering: .releasing)
        }
        thread.start()
    }

    /// Sends datagrams decided outside the receive threads (unreliable data that came over a WebSocket).
    private func sendFromElsewhere(_ datagrams: DatagramOutbox) {
        sideSendsOpen.withLock { open in
            guard open else { return }
            let dropped = datagrams.send(on: sockets[0])
            if dropped > 0 { relay.statistics.add(.datagramsNotSent, dropped) }
        }
    }

    /// Fails when another socket holds `address`. Sockets that share a port with `SO_REUSEPORT` split its datagrams,
    /// so without this check a second server started by the same user on the same port would silently take half of
    /// the first one's traffic; a plain bind fails instead.
    private static func checkFree(_ address: SocketAddress) throws {
        let probe = try makeSocket(address)
        defer { close(probe) }
        try bind(probe, to: address)
    }

    /// A blocking UDP socket bound to `address`, sharing its port with the endpoint's other sockets.
    private static func bind(_ address: SocketAddress) throws -> CInt {
        let socket = try makeSocket(address)
        var one: CInt = 1, buffer: CInt = 4 << 20, timeout = receiveTimeout
        let intSize = socklen_t(MemoryLayout<CInt>.size)
        _ = setsockopt(socket, SOL_SOCKET, SO_REUSEPORT, &one, intSize)
        // Deep queues for bursts (the kernel caps them at net.core.rmem_max / wmem_max).
        _ = setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &buffer, intSize)
        _ = setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &buffer, intSize)
        _ = setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        do {
            try bind(socket, to: address)
        } catch {
            close(socket)
            throw error
        }
        return socket
    }

    private static func makeSocket(_ address: SocketAddress) throws -> CInt {
        let family = address.protocol == .inet6 ? AF_INET6 : AF_INET
        #if canImport(Darwin)
        let socket = Darwin.socket(family, SOCK_DGRAM, 0)
        #else
        let socket = Glibc.socket(family, CInt(SOCK_DGRAM.rawValue), 0)
        #endif
        guard socket >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        return socket
    }

    private static func bind(_ socket: CInt, to address: SocketAddress) throws {
        #if canImport(Darwin)
        let bound = address.withSockAddr { Darwin.bind(socket, $0, socklen_t($1)) }
        #else
        let bound = address.withSockAddr { Glibc.bind(socket, $0, socklen_t($1)) }
        #endif
        guard bound == 0 else { throw IOError(errnoCode: errno, reason: "bind UDP \(address)") }
    }

    private static func localAddress(of socket: CInt) throws -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard result == 0 else { throw IOError(errnoCode: errno, reason: "getsockname") }
        switch CInt(storage.ss_family) {
        case AF_INET6:
            return withUnsafeBytes(of: storage) { SocketAddress($0.load(as: sockaddr_in6.self), host: "") }
        default:
            return withUnsafeBytes(of: storage) { SocketAddress($0.load(as: sockaddr_in.self), host: "") }
        }
    }
}
