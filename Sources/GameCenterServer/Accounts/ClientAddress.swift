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
        guard !Self.isLoopback(address) else { return nil }
        switch address {
        case .v4(let v4):
            self.key = Self.dotted(withUnsafeBytes(of: v4.address.sin_addr) { Array($0) })
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if Self.isMappedIPv4(bytes) {
                self.key = Self.dotted(Array(bytes[12..<16]))  // an IPv4 client of a dual-stack socket
            } else {
                let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
                self.key = groups.joined(separator: ":") + "::/64"
            }
        case .unixDomainSocket, nil:
            return nil
        }
    }

    /// Whether `address` is this host (127.0.0.0/8, ::1, or an IPv4 loopback address mapped into IPv6): a reverse
    /// proxy or a local tool.
    static func isLoopback(_ address: SocketAddress?) -> Bool {
        switch address {
        case .v4(let v4):
            return withUnsafeBytes(of: v4.address.sin_addr) { $0[0] == 127 }
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            return bytes == [UInt8](repeating: 0, count: 15) + [1] || (isMappedIPv4(bytes) && bytes[12] == 127)
        case .unixDomainSocket, nil:
            return false
        }
    }

    private static func isMappedIPv4(_ bytes: [UInt8]) -> Bool {
        bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
    }

    private static func dotted(_ bytes: [UInt8]) -> String {
        bytes.map(String.init).joined(separator: ".")
    }
}
