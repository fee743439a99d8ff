#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// An address where a match member's UDP socket may be reached directly: one of its own interface addresses with
/// the socket's port, or the address the relay saw its datagrams come from.
///
/// On the wire: family u8 (4 or 6), the address's 4 or 16 bytes, port u16.
public struct PeerCandidate: Sendable, Hashable {
    /// The IPv4 (4 bytes) or IPv6 (16 bytes) address, in network order.
    public var address: [UInt8]
    /// The UDP port.
    public var port: UInt16

    /// A candidate from raw address bytes; nil unless there are 4 or 16 of them and the port is not 0.
    public init?(address: [UInt8], port: UInt16) {
        guard address.count == 4 || address.count == 16, port != 0 else { return nil }
        self.address = address
        self.port = port
    }

    /// The candidate of a socket address the kernel gave; nil unless IPv4 or IPv6 with a port.
    public init?(_ datagramAddress: DatagramAddress) {
        let parsed: ([UInt8], UInt16)? = withUnsafeBytes(of: datagramAddress.storage) { bytes in
            switch CInt(datagramAddress.storage.ss_family) {
            case AF_INET:
                let address = bytes.load(as: sockaddr_in.self)
                return (withUnsafeBytes(of: address.sin_addr) { Array($0) }, UInt16(bigEndian: address.sin_port))
            case AF_INET6:
                let address = bytes.load(as: sockaddr_in6.self)
                return (withUnsafeBytes(of: address.sin6_addr) { Array($0) }, UInt16(bigEndian: address.sin6_port))
            default:
                return nil
            }
        }
        guard let (address, port) = parsed else { return nil }
        self.init(address: address, port: port)
    }

    /// The candidate as the socket calls take it.
    public var datagramAddress: DatagramAddress {
        var storage = sockaddr_storage()
        let length: socklen_t = withUnsafeMutableBytes(of: &storage) { bytes in
            if address.count == 4 {
                var ipv4 = sockaddr_in()
                ipv4.sin_family = sa_family_t(AF_INET)
                ipv4.sin_port = port.bigEndian
                withUnsafeMutableBytes(of: &ipv4.sin_addr) { $0.copyBytes(from: address) }
                bytes.storeBytes(of: ipv4, as: sockaddr_in.self)
                return socklen_t(MemoryLayout<sockaddr_in>.size)
            }
            var ipv6 = sockaddr_in6()
            ipv6.sin6_family = sa_family_t(AF_INET6)
            ipv6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &ipv6.sin6_addr) { $0.copyBytes(from: address) }
            bytes.storeBytes(of: ipv6, as: sockaddr_in6.self)
            return socklen_t(MemoryLayout<sockaddr_in6>.size)
        }
        return DatagramAddress(storage: storage, length: length)
    }

    /// Whether the address is IPv4.
    public var isIPv4: Bool { address.count == 4 }

    func write(to buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(isIPv4 ? 4 : 6))
        buffer.writeBytes(address)
        buffer.writeInteger(port)
    }

    static func read(from buffer: inout ByteBuffer) throws(RelayWireError) -> PeerCandidate {
        let family = try buffer.readRelayInteger(as: UInt8.self)
        guard family == 4 || family == 6 else { throw .invalidValue("address family \(family)") }
        guard let address = buffer.readBytes(length: family == 4 ? 4 : 16) else { throw .truncated }
        let port = try buffer.readRelayInteger(as: UInt16.self)
        guard let candidate = PeerCandidate(address: address, port: port) else { throw .invalidValue("port 0") }
        return candidate
    }
}

/// What a match member tells the others so that they can reach it directly: the numbering of its messages, its
/// key-agreement public key and where its UDP socket may be reached.
///
/// Sent to the relay in a ``RelayClientFrame/peerOffer(_:)`` frame; the relay passes it on in a
/// ``RelayServerFrame/peerOffer(sender:_:)`` frame, naming the member it came from (so a key is bound to the player
/// who sent it), with the address it saw the member's datagrams come from added. On the wire: stream u64, public
/// key 32 bytes, candidate count u8, the candidates.
public struct PeerOffer: Sendable, Equatable {
    /// Most candidates in one offer.
    public static let maximumCandidates = 16

    /// The sender's stream: a new `GKMatch` starts a new one, and the others start its numbering over.
    public var stream: UInt64
    /// The sender's X25519 public key for this match (32 bytes).
    public var publicKey: [UInt8]
    /// Where the sender's UDP socket may be reached, best first; at most ``maximumCandidates``.
    public var candidates: [PeerCandidate]

    /// Creates an offer; encoding traps unless the key is 32 bytes and there are at most ``maximumCandidates``.
    public init(stream: UInt64, publicKey: [UInt8], candidates: [PeerCandidate]) {
        self.stream = stream
        self.publicKey = publicKey
        self.candidates = candidates
    }

    func write(to buffer: inout ByteBuffer) {
        precondition(publicKey.count == 32, "a peer public key is 32 bytes")
        precondition(candidates.count <= Self.maximumCandidates, "more than \(Self.maximumCandidates) peer candidates")
        buffer.writeInteger(stream)
        buffer.writeBytes(publicKey)
        buffer.writeInteger(UInt8(candidates.count))
        for candidate in candidates { candidate.write(to: &buffer) }
    }

    static func read(from buffer: inout ByteBuffer) throws(RelayWireError) -> PeerOffer {
        let stream = try buffer.readRelayInteger(as: UInt64.self)
        guard let publicKey = buffer.readBytes(length: 32) else { throw .truncated }
        let count = Int(try buffer.readRelayInteger(as: UInt8.self))
        guard count <= maximumCandidates else { throw .invalidValue("\(count) peer candidates (at most \(maximumCandidates))") }
        var candidates: [PeerCandidate] = []
        for _ in 0..<count { candidates.append(try PeerCandidate.read(from: &buffer)) }
        return PeerOffer(stream: stream, publicKey: publicKey, candidates: candidates)
    }
}
