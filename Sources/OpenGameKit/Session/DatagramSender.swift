#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import NIOCore
import OpenGameKitSessionWire

/// Sends a session's unreliable datagrams on the caller's thread, through a UDP socket of its own: each sealed in a
/// temporary buffer, then one non-blocking `sendto`, with no queue and no event-loop hop in between.
///
/// Sending never runs on an event loop, so a caller that sends faster than the network takes cannot keep that loop
/// busy and starve its reads (an event loop runs queued tasks until none is left before it polls its sockets again).
/// A datagram the kernel does not take at once (send buffer full, no route) is dropped, as an unreliable message may be.
final class DatagramSender: Sendable {
    private let descriptor: CInt

    /// Opens the socket with a send buffer of `sendBufferBytes` (the kernel may give less: `net.core.wmem_max`).
    init(sendBufferBytes: Int) throws(GKSessionError) {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_DGRAM, 0)
        #else
        let descriptor = socket(AF_INET, CInt(SOCK_DGRAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else {
            throw GKSessionError(.communicationsFailure, "Could not open a UDP socket for unreliable data (errno \(errno)).")
        }
        var size = CInt(clamping: sendBufferBytes)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Seals `payload` for `target` and sends the datagram to `address`; returns whether the kernel took it.
    func send(_ payload: Data, to target: UnreliableTarget, at address: SocketAddress) -> Bool {
        let length = UnreliableDatagram.length(payloadCount: payload.count)
        return withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { bytes in
            target.header.seal(payload, with: target.cipher, into: bytes)
            return address.withSockAddr { pointer, size in
                sendto(descriptor, bytes.baseAddress, length, CInt(MSG_DONTWAIT), pointer, socklen_t(size)) == length
            }
        }
    }
}
