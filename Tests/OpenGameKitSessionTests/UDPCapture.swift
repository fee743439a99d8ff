#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Foundation
import Synchronization

/// Test support: what anyone on the path sees of UDP. A raw IPv4 socket that records the payload of every UDP
/// datagram this host receives for some destination ports, loopback included. Needs root (`CAP_NET_RAW`); call
/// ``stop()`` when done.
final class UDPCapture: Sendable {
    /// One datagram seen.
    struct Datagram: Sendable {
        /// Its destination port.
        var port: UInt16
        /// Its payload.
        var payload: [UInt8]
    }

    /// Whether this process may open raw sockets.
    static var isAvailable: Bool {
        let descriptor = socket(AF_INET, CInt(SOCK_RAW.rawValue), CInt(IPPROTO_UDP))
        if descriptor >= 0 { close(descriptor) }
        return descriptor >= 0
    }

    private let descriptor: CInt
    private let ports: Set<UInt16>
    private let seen = Mutex<[Datagram]>([])
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts recording the datagrams to `ports`.
    init(ports: Set<UInt16>) throws {
        descriptor = socket(AF_INET, CInt(SOCK_RAW.rawValue), CInt(IPPROTO_UDP))
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM) }
        // A large buffer, so that other tests' traffic on the loopback interface does not crowd ours out.
        var size = CInt(32 << 20)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUFFORCE, &size, socklen_t(MemoryLayout<CInt>.size))
        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.ports = ports
        DispatchQueue.global().async { self.run() }
    }

    /// The datagrams seen so far.
    var datagrams: [Datagram] { seen.withLock { $0 } }

    /// Stops recording and closes the socket; returns every datagram seen.
    func stop() -> [Datagram] {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
        close(descriptor)
        return datagrams
    }

    private func run() {
        var packet = [UInt8](repeating: 0, count: 65_536)
        while !stopping.load(ordering: .relaxed) {
            let count = packet.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0, let datagram = Self.udpDatagram(in: packet[..<count]), ports.contains(datagram.port) else { continue }
            seen.withLock { $0.append(datagram) }
        }
        finished.signal()
    }

    /// The UDP datagram in an IPv4 packet: the IP header's length is in its first byte, then the UDP header (source
    /// port, destination port, length, checksum) and the payload.
    private static func udpDatagram(in packet: ArraySlice<UInt8>) -> Datagram? {
        let bytes = Array(packet)
        guard bytes.count >= 20, bytes[0] >> 4 == 4, bytes[9] == UInt8(IPPROTO_UDP) else { return nil }
        let udp = Int(bytes[0] & 0x0F) * 4
        guard bytes.count >= udp + 8 else { return nil }
        let port = UInt16(bytes[udp + 2]) << 8 | UInt16(bytes[udp + 3])
        let length = Int(bytes[udp + 4]) << 8 | Int(bytes[udp + 5])
        guard length >= 8, udp + length <= bytes.count else { return nil }
        return Datagram(port: port, payload: Array(bytes[(udp + 8)..<(udp + length)]))
    }
}
