#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// A UDP peer's address (IPv4 or IPv6) as the kernel gives and takes it, stored inline: recording where a datagram
/// came from and sending to it copies bytes, where NIO's `SocketAddress` allocates per datagram. The relay's UDP
/// threads and the SDK's relay socket use it.
public struct DatagramAddress: Sendable {
    /// The `sockaddr_in` or `sockaddr_in6`, at the start.
    public private(set) var storage = sockaddr_storage()
    /// How many bytes of `storage` the address takes.
    public private(set) var length: socklen_t = 0

    /// The address the kernel wrote to `storage`, `length` bytes of it.
    package init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// The address `address` (IPv4 or IPv6); nil for a Unix domain address.
    public init?(_ address: SocketAddress) {
        guard address.protocol == .inet || address.protocol == .inet6 else { return nil }
        length = address.withSockAddr { address, size in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: size)) }
            return socklen_t(size)
        }
    }

    /// The sender the kernel wrote to `sender` (by `recvfrom` or `recvmmsg`); nil unless IPv4 or IPv6.
    package init?(received sender: UnsafePointer<sockaddr_storage>) {
        switch CInt(sender.pointee.ss_family) {
        case AF_INET: length = socklen_t(MemoryLayout<sockaddr_in>.size)
        case AF_INET6: length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        default: return nil
        }
        storage = sender.pointee
    }

    /// The address as NIO's type (for logs and tests).
    public var socketAddress: SocketAddress {
        withUnsafeBytes(of: storage) { bytes in
            CInt(storage.ss_family) == AF_INET6
                ? SocketAddress(bytes.load(as: sockaddr_in6.self), host: "")
                : SocketAddress(bytes.load(as: sockaddr_in.self), host: "")
        }
    }

    /// Calls `body` with the address as the socket calls take it.
    public func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }
}
