import Foundation
import GameCenterProtocol
import NIOCore
import Testing
@testable import GameCenterServer
#if canImport(Glibc)
import Glibc
#endif

/// The server's many-datagrams-per-call UDP I/O, on real loopback sockets.
@Suite struct DatagramBatchTests {
    /// A blocking IPv4 UDP socket on 127.0.0.1 with a short receive timeout, and its address.
    static func socket() throws -> (CInt, SocketAddress) {
        let descriptor = Glibc.socket(AF_INET, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 0)
        _ = address.withSockAddr { Glibc.bind(descriptor, $0, socklen_t($1)) }
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        return (descriptor, SocketAddress(bound, host: "127.0.0.1"))
    }

    /// Waits (at most 10 s) until `descriptor` has a datagram to read, so that a read that does not wait finds it.
    static func isReadable(_ descriptor: CInt) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 10_000) == 1
    }

    @Test func aBatchGoesOutInOneCallAndComesInWithItsSenders() throws {
        let (sender, senderAddress) = try Self.socket()
        let (receiver, receiverAddress) = try Self.socket()
        defer { close(sender); close(receiver) }
        let outgoing: [(address: SocketAddress, bytes: ByteBuffer)] = (0..<5).map {
            (receiverAddress, ByteBuffer(bytes: [UInt8](repeating: UInt8($0), count: 10 + $0)))
        }
        #expect(DatagramBatch(slots: 1).send(outgoing, on: sender) == 0)

        let batch = DatagramBatch(slots: 8)
        var received: [ByteBuffer] = []
        // The first read waits for one; the next takes the other four at once.
        #expect(batch.receive(on: receiver, wait: true) == 1)
        received.append(try #require(batch.datagram(0)).bytes)
        while received.count < 5 {
            let count = batch.receive(on: receiver, wait: false)
            try #require(count > 0, "the rest was not waiting")
            for slot in 0..<count {
                let (bytes, from) = try #require(batch.datagram(slot))
                #expect(from.port == senderAddress.port)
                received.append(bytes)
            }
        }
        #expect(received == outgoing.map(\.bytes))
    }

    @Test func oneUnsendableDatagramIsDroppedAndTheRestStillGo() throws {
        let (sender, _) = try Self.socket()
        let (receiver, receiverAddress) = try Self.socket()
        defer { close(sender); close(receiver) }
        // An IPv6 destination on an IPv4 socket: the kernel refuses that one datagram.
        let elsewhere = try SocketAddress(ipAddress: "::1", port: 9)
        let outgoing: [(address: SocketAddress, bytes: ByteBuffer)] = [
            (receiverAddress, ByteBuffer(string: "first")), (elsewhere, ByteBuffer(string: "lost")), (receiverAddress, ByteBuffer(string: "third")),
        ]
        #expect(DatagramBatch(slots: 1).send(outgoing, on: sender) == 1)
        let batch = DatagramBatch(slots: 1)
        var texts: [String] = []
        while texts.count < 2, batch.receive(on: receiver, wait: true) == 1 {
            texts.append(String(buffer: try #require(batch.datagram(0)).bytes))
        }
        #expect(texts == ["first", "third"])
    }

    @Test func aDatagramLongerThanASlotArrivesLongerThanAnyValidOne() throws {
        let (sender, _) = try Self.socket()
        let (receiver, receiverAddress) = try Self.socket()
        defer { close(sender); close(receiver) }
        let batch = DatagramBatch(slots: 4)
        for wait in [true, false] {
            #expect(DatagramBatch(slots: 1).send([(receiverAddress, ByteBuffer(repeating: 1, count: 5000))], on: sender) == 0)
            if !wait { try #require(Self.isReadable(receiver), "the datagram did not arrive within 10 s") }
            #expect(batch.receive(on: receiver, wait: wait) == 1)
            let bytes = try #require(batch.datagram(0)).bytes
            #expect(bytes.readableBytes > 1289, "wait: \(wait)")
        }
    }

    @Test func anOutboxGrowsPastItsFirstCapacityAndKeepsOrder() throws {
        let (sender, _) = try Self.socket()
        let (receiver, receiverAddress) = try Self.socket()
        defer { close(sender); close(receiver) }
        var buffer: CInt = 1 << 20
        _ = setsockopt(receiver, SOL_SOCKET, SO_RCVBUF, &buffer, socklen_t(MemoryLayout<CInt>.size))
        // 100 bytes of room and 64 entries at first; 200 datagrams of 1–200 bytes need both to grow.
        let outbox = DatagramOutbox(capacity: 100)
        let address = try #require(DatagramAddress(receiverAddress))
        for size in 1...200 {
            [UInt8](repeating: UInt8(size), count: size).withUnsafeBytes { outbox.append(to: address, bytes: $0) }
        }
        #expect(outbox.count == 200)
        #expect(outbox.datagram(199).bytes == [UInt8](repeating: 200, count: 200))
        #expect(outbox.send(on: sender) == 0)
        #expect(outbox.isEmpty)
        let batch = DatagramBatch(slots: 1)
        for size in 1...200 {
            try #require(batch.receive(on: receiver, wait: true) == 1, "datagram \(size) did not arrive")
            let (bytes, _) = try #require(batch.slot(0))
            #expect(Array(bytes) == [UInt8](repeating: UInt8(size), count: size))
        }
    }
}
