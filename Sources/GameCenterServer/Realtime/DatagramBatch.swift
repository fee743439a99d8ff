#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CUDPBatch
import NIOCore

/// Reusable memory for moving many datagrams per system call on a blocking UDP socket (`recvmmsg` into fixed
/// slots; `sendmmsg` from a packed copy of what is to go out; single datagrams with `recvfrom` and `sendto`). One thread uses one batch; nothing here is shared.
/// The server's UDP endpoint and the relay benchmark's load generator use it.
public final class DatagramBatch {
    /// Datagrams read per call at most.
    public let slots: Int
    /// Bytes per receive slot: a relay datagram is at most 1,289 bytes, so anything longer is rejected anyway.
    static let slotBytes = 2048

    private let receiveBytes: UnsafeMutablePointer<UInt8>
    private let senders: UnsafeMutablePointer<sockaddr_storage>
    private let lengths: UnsafeMutablePointer<Int>

    private var sendBytes: [UInt8] = []
    private var sendOffsets: [Int] = []
    private var sendLengths: [Int] = []
    private var sendAddresses: [sockaddr_storage] = []
    private var sendAddressLengths: [socklen_t] = []

    /// A batch that reads up to `slots` datagrams per call.
    public init(slots: Int) {
        self.slots = slots
        receiveBytes = .allocate(capacity: slots * Self.slotBytes)
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
    public func receive(on descriptor: CInt, wait: Bool) -> Int {
        max(0, Int(ogk_udp_receive(descriptor, receiveBytes, Self.slotBytes, UInt32(slots), senders, lengths, wait ? 1 : 0)))
    }

    /// Datagram `slot` of the last `receive` (a copy) and its sender; nil when the sender is neither IPv4 nor IPv6.
    /// A datagram cut short to the slot is longer than any valid one, and is rejected as such.
    public func datagram(_ slot: Int) -> (bytes: ByteBuffer, from: SocketAddress)? {
        let from: SocketAddress
        switch CInt(senders[slot].ss_family) {
        case AF_INET:
            from = UnsafeRawPointer(senders + slot).withMemoryRebound(to: sockaddr_in.self, capacity: 1) { SocketAddress($0.pointee, host: "") }
        case AF_INET6:
            from = UnsafeRawPointer(senders + slot).withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { SocketAddress($0.pointee, host: "") }
        default:
            return nil
        }
        let bytes = UnsafeRawBufferPointer(start: receiveBytes + slot * Self.slotBytes, count: min(lengths[slot], Self.slotBytes))
        return (ByteBuffer(bytes: bytes), from)
    }

    // MARK: Sending

    /// Sends `datagrams` without blocking; returns how many were dropped (the kernel's send buffer was full, or a
    /// destination cannot be reached — unreliable data may be lost).
    public func send(_ datagrams: [(address: SocketAddress, bytes: ByteBuffer)], on descriptor: CInt) -> Int {
        guard !datagrams.isEmpty else { return 0 }
        sendBytes.removeAll(keepingCapacity: true)
        sendOffsets.removeAll(keepingCapacity: true)
        sendLengths.removeAll(keepingCapacity: true)
        sendAddresses.removeAll(keepingCapacity: true)
        sendAddressLengths.removeAll(keepingCapacity: true)
        for datagram in datagrams {
            sendOffsets.append(sendBytes.count)
            sendLengths.append(datagram.bytes.readableBytes)
            sendBytes.append(contentsOf: datagram.bytes.readableBytesView)
            var storage = sockaddr_storage()
            let length = datagram.address.withSockAddr { address, size in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: size)) }
                return socklen_t(size)
            }
            sendAddresses.append(storage)
            sendAddressLengths.append(length)
        }
        let count = datagrams.count
        return sendBytes.withUnsafeBufferPointer { bytes in
            sendOffsets.withUnsafeBufferPointer { offsets in
                sendLengths.withUnsafeBufferPointer { lengths in
                    sendAddresses.withUnsafeBufferPointer { addresses in
                        sendAddressLengths.withUnsafeBufferPointer { addressLengths in
                            var next = 0, dropped = 0
                            while next < count {
                                next += Int(ogk_udp_send(descriptor, bytes.baseAddress, offsets.baseAddress! + next, lengths.baseAddress! + next,
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
}
