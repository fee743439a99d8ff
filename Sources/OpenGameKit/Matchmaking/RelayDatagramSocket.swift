#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GameCenterProtocol
import NIOCore
import Synchronization

/// A device's UDP socket for a match: to the relay, and to the other members on direct paths. Sends go out on the
/// caller's thread (one `sendto`, no hop to another thread); a thread of its own waits in `recvfrom` and hands every
/// datagram that arrives, with where it came from, to `onDatagram`, so a datagram reaches the match with one wake-up.
///
/// The descriptor stays open until the object goes away (the receive thread holds it until `close()` stops the
/// thread), so a send can never reach a descriptor number the system has since given to something else.
final class RelayDatagramSocket: Sendable {
    private let descriptor: CInt
    /// The relay's address, kept as `sendto` takes it (NIO's `SocketAddress` would be converted on every send).
    private let relay: DatagramAddress
    private let closed = Atomic<Bool>(false)
    /// How long a blocked receive waits before it looks whether the socket was closed (closing also wakes it).
    static let receiveTimeout = timeval(tv_sec: 0, tv_usec: 250_000)

    private init(descriptor: CInt, relay: DatagramAddress) {
        self.descriptor = descriptor
        self.relay = relay
    }

    deinit {
        closeDescriptor(descriptor)
    }

    /// Opens a socket on an ephemeral port for datagrams to and from `host:port`.
    static func open(
        host: String, port: Int, onDatagram: @escaping @Sendable (UnsafeMutableRawBufferPointer, DatagramAddress) -> Void
    ) throws -> RelayDatagramSocket {
        let relay = try SocketAddress.makeAddressResolvingHost(host, port: port)
        guard let relayAddress = DatagramAddress(relay) else { throw IOError(errnoCode: EAFNOSUPPORT, reason: "relay address \(relay)") }
        let family = relay.protocol == .inet6 ? AF_INET6 : AF_INET
        #if canImport(Darwin)
        let descriptor = socket(family, SOCK_DGRAM, 0)
        #else
        let descriptor = socket(family, CInt(SOCK_DGRAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        var timeout = receiveTimeout
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let local = try SocketAddress(ipAddress: relay.protocol == .inet6 ? "::" : "0.0.0.0", port: 0)
        guard local.withSockAddr({ bind(descriptor, $0, socklen_t($1)) }) == 0 else {
            let error = IOError(errnoCode: errno, reason: "bind")
            closeDescriptor(descriptor)
            throw error
        }
        let socket = RelayDatagramSocket(descriptor: descriptor, relay: relayAddress)
        Thread {
            // Named from inside: Linux applies a name only to the running thread (15 characters at most).
            Thread.current.name = "OGK relay UDP"
            socket.receive(onDatagram)
        }.start()
        return socket
    }

    /// Sends one datagram to the relay; a datagram the kernel does not take at once is dropped (lost datagrams are
    /// the nature of unreliable data).
    func send(_ datagram: ByteBuffer) {
        datagram.withUnsafeReadableBytes { send($0) }
    }

    /// Seals a `clientData` datagram carrying `payload` to `recipients` under `header` and sends it, as `send`.
    func sendClientData(_ header: RelayDatagramHeader, recipients: [UInt8], payload: Data, key: RelayKey) {
        let size = RelayDatagram.clientDataSize(recipientCount: recipients.count, payloadCount: payload.count)
        withUnsafeTemporaryAllocation(byteCount: size, alignment: 16) { space in
            let length = payload.withUnsafeBytes { RelayDatagram.sealClientData(header, recipients: recipients, payload: $0, key: key, in: space) }
            send(UnsafeRawBufferPointer(rebasing: space[..<length]))
        }
    }

    /// Seals a `clientVoice` datagram carrying `payload` on `channel` under `header` and sends it, as `send`.
    func sendClientVoice(_ header: RelayDatagramHeader, channel: String, payload: Data, key: RelayKey) {
        let size = RelayDatagram.clientVoiceSize(channel: channel, payloadCount: payload.count)
        withUnsafeTemporaryAllocation(byteCount: size, alignment: 16) { space in
            let length = payload.withUnsafeBytes { RelayDatagram.sealClientVoice(header, channel: channel, payload: $0, key: key, in: space) }
            send(UnsafeRawBufferPointer(rebasing: space[..<length]))
        }
    }

    private func send(_ bytes: UnsafeRawBufferPointer) {
        relay.withSockAddr { address, length in
            _ = sendto(descriptor, bytes.baseAddress, bytes.count, CInt(MSG_DONTWAIT), address, length)
        }
    }

    /// Sends one datagram to `destination` (another member, on a direct path), as `send` does to the relay.
    func send(_ bytes: UnsafeRawBufferPointer, to destination: DatagramAddress) {
        destination.withSockAddr { address, length in
            _ = sendto(descriptor, bytes.baseAddress, bytes.count, CInt(MSG_DONTWAIT), address, length)
        }
    }

    /// Whether the socket speaks IPv6 (it does when the relay's address is IPv6).
    var isIPv6: Bool { CInt(relay.storage.ss_family) == AF_INET6 }

    /// The port the socket is bound to; nil if the system does not say.
    var localPort: UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard status == 0, let address = DatagramAddress(received: &storage) else { return nil }
        return PeerCandidate(address)?.port
    }

    /// Stops receiving (sends still leave until the object goes away).
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        #if canImport(Darwin)
        _ = shutdown(descriptor, SHUT_RD)
        #else
        _ = shutdown(descriptor, CInt(SHUT_RD))
        #endif
    }

    /// The receive thread's loop, until `close()`.
    private func receive(_ onDatagram: @Sendable (UnsafeMutableRawBufferPointer, DatagramAddress) -> Void) {
        // Longer than any relay datagram (1,289 bytes): a longer one arrives cut short and fails to open.
        let capacity = 2048
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        defer { bytes.deallocate() }
        var sender = sockaddr_storage()
        while !closed.load(ordering: .relaxed) {
            var senderLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let received = withUnsafeMutablePointer(to: &sender) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, bytes, capacity, 0, $0, &senderLength) }
            }
            // Nothing within the timeout, a signal, or an ICMP error for an earlier send: go on waiting.
            guard received > 0, let from = DatagramAddress(received: &sender) else { continue }
            onDatagram(UnsafeMutableRawBufferPointer(start: bytes, count: received), from)
        }
    }
}

/// The system's `close(2)` (inside `RelayDatagramSocket`, `close` means its method).
private func closeDescriptor(_ descriptor: CInt) {
    _ = close(descriptor)
}
