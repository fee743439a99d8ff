import ArgumentParser
import Foundation
import GameCenterProtocol
import GameCenterServer
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The relay alone, without the SDK: two preloaded members speak the datagram protocol on blocking sockets in two
/// threads (as the raw anchor does); the round trip is member → relay → member → relay → member.
enum LeanRoundTrip {
    struct Figures {
        var p50: Double
        var p99: Double
        var lost: Int
    }

    /// A member's socket and keys, used by one thread only.
    /// `@unchecked Sendable`: not thread-safe: one owner thread at a time; it is Sendable only to move to that thread.
    final class Peer: @unchecked Sendable {
        let socket: Int32
        let welcome: RelayWelcome
        var counter: UInt64 = 0
        var relay: sockaddr_in

        init(welcome: RelayWelcome, relayPort: Int) {
            socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            self.welcome = welcome
            relay = sockaddr_in(
                sin_family: sa_family_t(AF_INET), sin_port: in_port_t(UInt16(relayPort).bigEndian),
                sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        }

        func send(_ kind: RelayDatagramKind, body: ByteBuffer) {
            counter += 1
            var datagram = ByteBuffer()
            RelayDatagram.seal(
                RelayDatagramHeader(kind: kind, connectionID: welcome.connectionID, counter: counter), body: body, key: welcome.key, into: &datagram)
            datagram.withUnsafeReadableBytes { bytes in
                _ = withUnsafePointer(to: &relay) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(socket, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }

        /// The payload of the next authentic datagram, or nil after the receive timeout.
        func receive() -> ByteBuffer? {
            var buffer = [UInt8](repeating: 0, count: 2048)
            let n = recv(socket, &buffer, buffer.count, 0)
            guard n > 0, let (header, body) = try? RelayDatagram.open(ByteBuffer(bytes: buffer[0..<n]), key: welcome.key) else { return nil }
            if header.kind == .serverProbeAck { return ByteBuffer() }
            return (try? RelayDatagram.readServerDataBody(body))?.payload
        }
    }

    static func measure(server: BenchServer, preload: RelayPreload, roundTrips: Int) async throws -> Figures {
        let a = Peer(welcome: try await RelayLoad.connect(server: server, preload: preload, player: 1), relayPort: server.udpPort)
        let b = Peer(welcome: try await RelayLoad.connect(server: server, preload: preload, player: 2), relayPort: server.udpPort)
        for peer in [a, b] {
            peer.send(.clientProbe, body: ByteBuffer())
            guard peer.receive() != nil else { throw ValidationError("no probe answer from the relay") }
        }
        let aIndex = a.welcome.memberIndex, bIndex = b.welcome.memberIndex
        let total = roundTrips + 500
        let echo = Thread {
            for _ in 0..<total {
                guard let payload = b.receive() else { continue }
                b.send(.clientData, body: RelayDatagram.clientDataBody(recipients: [aIndex], payload: payload))
            }
        }
        echo.start()
        return await withCheckedContinuation { continuation in
            Thread {
                var samples: [Double] = []
                var lost = 0
                let message = ByteBuffer(repeating: 1, count: 100)
                for i in 0..<total {
                    let start = ContinuousClock.now
                    a.send(.clientData, body: RelayDatagram.clientDataBody(recipients: [bIndex], payload: message))
                    guard a.receive() != nil else {
                        lost += 1
                        continue
                    }
                    if i >= 500 { samples.append(secondsSince(start)) }
                }
                samples.sort()
                continuation.resume(returning: Figures(p50: percentile(samples, 0.5), p99: percentile(samples, 0.99), lost: lost))
            }.start()
        }
    }
}
