#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CUDPBatch
import GameCenterProtocol
import NIOCore

/// Reusable memory for receiving many datagrams per system call on a blocking UDP socket (`recvmmsg` into fixed
/// slots; a single datagram with `recvfrom`). One thread uses one batch; nothing here is shared. The server's UDP
/// endpoint and the relay benchmark's load generator use it; what goes out goes through a ``DatagramOutbox``.
package final class DatagramBatch {
    /// Datagrams read per call at most.
    package let slots: Int
    /// Bytes per receive slot: a relay datagram is at most 1,289 bytes, so anything longer is rejected anyway.
    static let slotBytes = 2048

    private let receiveBytes: UnsafeMutableRawPointer
    private let senders: UnsafeMutablePointer<sockaddr_storage>
    private let lengths: UnsafeMutablePointer<Int>
    /// For `send(_:on:)`.
    private let outbox = DatagramOutbox()

    /// A batch that reads up to `slots` datagrams per call.
    package init(slots: Int) {
        self.slots = slots
        receiveBytes = .allocate(byteCount: slots * Self.slotBytes, alignment: 16)
        senders = .allocate(capacity: slots)
        lengths = .allocate(capacity: slots)
    }

    deinit {
        receiveBytes.deallocate()
        senders.deallocate()
        lengths.deallocate()
    }

    // MARK: Receiving

    /// With `wait`, blocks until a datagram is there (or the socket's receive timeout passes, or it is shut down)
    /// and takes that one (a plain `recvfrom`, the cheapest call when traffic is light); without, takes as many as are
    /// waiting, up to `slots`, without blocking (one `recvmmsg`). Returns how many.
    package func receive(on descriptor: CInt, wait: Bool) -> Int {
        max(
            0,
            Int(
                ogk_udp_receive(
                    descriptor, receiveBytes.assumingMemoryBound(to: UInt8.self), Self.slotBytes, UInt32(slots),
                    senders, lengths, wait ? 1 : 0)))
    }

    /// Datagram `slot` of the last `receive`, where it lies (valid until the next `receive`; it may be changed in
    /// place, say opened), and its sender; nil when the sender is neither IPv4 nor IPv6. A datagram cut short to
    /// the slot is longer than any valid one, and is rejected as such.
    package func slot(_ slot: Int) -> (bytes: UnsafeMutableRawBufferPointer, from: DatagramAddress)? {
        guard let from = DatagramAddress(received: senders + slot) else { return nil }
        return (UnsafeMutableRawBufferPointer(start: receiveBytes + slot * Self.slotBytes, count: min(lengths[slot], Self.slotBytes)), from)
    }

    /// Datagram `slot` of the last `receive` (a copy) and its sender; nil when the sender is neither IPv4 nor IPv6.
    package func datagram(_ slot: Int) -> (bytes: ByteBuffer, from: SocketAddress)? {
        guard let (bytes, from) = self.slot(slot) else { return nil }
        return (ByteBuffer(bytes: UnsafeRawBufferPointer(bytes)), from.socketAddress)
    }

    // MARK: Sending

    /// Sends `datagrams` without blocking, in as few calls as the kernel takes; returns how many were dropped.
    package func send(_ datagrams: [(address: SocketAddress, bytes: ByteBuffer)], on descriptor: CInt) -> Int {
        var unaddressable = 0
        for datagram in datagrams {
            guard let address = DatagramAddress(datagram.address) else {
                unaddressable += 1
                continue
            }
            datagram.bytes.withUnsafeReadableBytes { outbox.append(to: address, bytes: $0) }
        }
        return unaddressable + outbox.send(on: descriptor)
    }
}

/// Datagrams waiting to go out together in one `sendmmsg`, each written (and sealed) in place in one packed buffer,
/// with its destination.
///
/// Not thread-safe: one thread at a time fills and sends an outbox. It is marked `Sendable` only so that a match's
/// state can seal into it while the match's lock is held; nothing keeps a reference to it past that.
/// `@unchecked Sendable`: not thread-safe: one owner thread at a time; it is Sendable only to be used under a match's lock.
package final class DatagramOutbox: @unchecked Sendable {
    private var bytes: UnsafeMutableRawPointer
    private var capacity: Int
    private var used = 0
    private var offsets: [Int] = []
    private var lengths: [Int] = []
    private var addresses: [sockaddr_storage] = []
    private var addressLengths: [socklen_t] = []

    /// An empty outbox with room for `capacity` bytes of datagrams (it grows when a batch needs more).
    package init(capacity: Int = 16 << 10) {
        self.capacity = capacity
        bytes = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        bytes.deallocate()
    }

    /// Datagrams waiting.
    package var count: Int { offsets.count }
    /// Whether none is waiting.
    package var isEmpty: Bool { offsets.isEmpty }

    /// Adds a datagram for `address` of at most `maximumLength` bytes: `write` fills the space it is given and
    /// returns the datagram's length.
    package func append(to address: DatagramAddress, maximumLength: Int, _ write: (UnsafeMutableRawBufferPointer) -> Int) {
        if used + maximumLength > capacity {
            capacity = max(capacity * 2, used + maximumLength)
            let grown = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            grown.copyMemory(from: bytes, byteCount: used)
            bytes.deallocate()
            bytes = grown
        }
        let length = write(UnsafeMutableRawBufferPointer(start: bytes + used, count: maximumLength))
        precondition(length <= maximumLength, "a datagram longer than the space it asked for")
        offsets.append(used)
        lengths.append(length)
        addresses.append(address.storage)
        addressLengths.append(address.length)
        used += length
    }

    /// Adds a copy of `datagram` for `address`.
    package func append(to address: DatagramAddress, bytes datagram: UnsafeRawBufferPointer) {
        append(to: address, maximumLength: datagram.count) { space in
            space.copyMemory(from: datagram)
            return datagram.count
        }
    }

    /// Datagram `index` (a copy) and its destination.
    package func datagram(_ index: Int) -> (address: SocketAddress, bytes: [UInt8]) {
        let address = DatagramAddress(storage: addresses[index], length: addressLengths[index])
        return (address.socketAddress, Array(UnsafeRawBufferPointer(start: bytes + offsets[index], count: lengths[index])))
    }

    /// Forgets every waiting datagram (keeping the memory).
    package func removeAll() {
        used = 0
        offsets.removeAll(keepingCapacity: true)
        lengths.removeAll(keepingCapacity: true)
        addresses.removeAll(keepingCapacity: true)
        addressLengths.removeAll(keepingCapacity: true)
    }

    /// Sends every waiting datagram without blocking and empties the outbox; returns how many were dropped (the
    /// kernel's send buffer was full, or a destination cannot be reached — unreliable data may be lost).
    package func send(on descriptor: CInt) -> Int {
        defer { removeAll() }
        let count = offsets.count
        guard count > 0 else { return 0 }
        let base = bytes.assumingMemoryBound(to: UInt8.self)
        return offsets.withUnsafeBufferPointer { offsets in
            lengths.withUnsafeBufferPointer { lengths in
                addresses.withUnsafeBufferPointer { addresses in
                    addressLengths.withUnsafeBufferPointer { addressLengths in
                        var next = 0, dropped = 0
                        while next < count {
                            next += Int(
                                ogk_udp_send(
                                    descriptor, base, offsets.baseAddress! + next, lengths.baseAddress! + next,
                                    addresses.baseAddress! + next, addressLengths.baseAddress! + next, UInt32(count - next)))
                            guard next < count else { break }
                            if errno == EAGAIN || errno == EWOULDBLOCK {
                                // The send buffer is full: the rest is dropped.
                                return dropped + count - next
                            }
                            // This one cannot go (say, no route to its address); the rest still can.
                            next += 1
                            dropped += 1
                        }
                        return dropped
                    }
                }
            }
        }
    }
}
