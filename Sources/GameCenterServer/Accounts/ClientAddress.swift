import NIOCore

/// Where a sign-in comes from, as the throttle counts it: an IPv4 address, or the /64 network of an IPv6 address
/// (one subscriber is usually given a whole /64, so walking through its addresses gains an attacker nothing).
///
/// A loopback peer is not throttled by address: it is a reverse proxy on the same host (or a local tool), and all
/// the proxy's clients would share its one address — one attacker would lock every player's sign-in. Such a server
/// throttles by account only.
struct ClientAddress: Hashable, Sendable {
    /// The stored form: `203.0.113.7`, or `2001:db8:0:1::/64`.
    let key: String

    /// The address of a connection's peer; nil for none (a Unix socket, an in-process test request) and loopback.
    init?(_ address: SocketAddress?) {
        switch address {
        case .v4(let v4):
            let bytes = withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
            guard bytes[0] != 127 else { return nil }
            self.key = Self.dotted(bytes)
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            guard bytes != [UInt8](repeating: 0, count: 15) + [1] else { return nil }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                guard bytes[12] != 127 else { return nil }
                self.key = Self.dotted(Array(bytes[12..<16]))  // an IPv4 client of a dual-stack socket
            } else {
                let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
                self.key = groups.joined(separator: ":") + "::/64"
            }
        case .unixDomainSocket, nil:
            return nil
        }
    }

    private static func dotted(_ bytes: [UInt8]) -> String {
        bytes.map(String.init).joined(separator: ".")
    }
}
