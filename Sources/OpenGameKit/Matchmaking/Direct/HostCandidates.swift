#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GameCenterProtocol

/// The addresses of this host's interfaces that are up, as direct-path candidates for a socket bound to `port` on
/// every interface: of the socket's family, loopback last (it reaches members on the same host only), IPv6
/// link-local ones left out (they need an interface to be named).
enum HostCandidates {
    static func gather(port: UInt16, ipv6: Bool) -> [PeerCandidate] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: [PeerCandidate] = []
        var loopback: [PeerCandidate] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, let address = entry.pointee.ifa_addr,
                CInt(address.pointee.sa_family) == (ipv6 ? AF_INET6 : AF_INET)
            else { continue }
            let bytes: [UInt8]
            if ipv6 {
                var ipv6Address = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                bytes = withUnsafeBytes(of: &ipv6Address) { Array($0) }
                if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { continue }
            } else {
                var ipv4Address = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                bytes = withUnsafeBytes(of: &ipv4Address) { Array($0) }
            }
            guard let candidate = PeerCandidate(address: bytes, port: port), !found.contains(candidate), !loopback.contains(candidate) else { continue }
            if flags & Int32(IFF_LOOPBACK) != 0 { loopback.append(candidate) } else { found.append(candidate) }
        }
        return Array((found + loopback).prefix(PeerOffer.maximumCandidates - 1))
    }
}
