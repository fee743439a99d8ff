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

    private static func free(_ type: Int32) throws -> Int {
        let socket = Glibc.socket(AF_INET, type, 0)
        guard socket >= 0 else { throw LiveServerError("socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw LiveServerError("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard named == 0 else { throw LiveServerError("getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
