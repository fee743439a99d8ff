import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Free local ports, for a server that must be told its port before a proxy in front of it starts.
enum FreePort {
    /// A UDP port on 127.0.0.1 that was free a moment ago.
    static func udp() throws -> Int {
        try free(Int32(SOCK_DGRAM.rawValue))
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago.
    static func tcp() throws -> Int {
        try free(Int32(SOCK_STREAM.rawValue))
    }

    /// A TCP port on 127.0.0.1 below the kernel's ephemeral range (`ip_local_port_range`, 32768 and up by default)
    /// that is free now, for a server that stops and starts again on it: a port from the ephemeral range can be
    /// handed meanwhile to any other server bound to port 0 (seen: a test's PostgreSQL could not start again).
    static func tcpOutsideEphemeralRange() throws -> Int {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let ephemeralStart = range?.first ?? 32768
        let candidates = 20_000..<max(20_001, min(ephemeralStart, 32_768))
        for _ in 0..<100 {
            let port = Int.random(in: candidates)
            if try free(Int32(SOCK_STREAM.rawValue), port: port) != nil { return port }
        }
        throw LiveServerError("no free TCP port below the ephemeral range")
    }

    private static func free(_ type: Int32) throws -> Int {
        guard let port = try free(type, port: 0) else { throw LiveServerError("bind() failed") }
        return port
    }

    /// Binds `port` (0: any) on 127.0.0.1 and releases it; the port bound, or nil when it was taken.
    private static func free(_ type: Int32, port: Int) throws -> Int? {
        let socket = Glibc.socket(AF_INET, type | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw LiveServerError("socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { return nil }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard named == 0 else { throw LiveServerError("getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
