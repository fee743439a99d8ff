import Foundation

/// A plain blocking TCP connection to a live server, for requests no HTTP client would send.
final class RawTCPConnection {
    private var descriptor: CInt

    /// Connects to `127.0.0.1:port` from `source` (another loopback address counts as another client address);
    /// `receiveBuffer` shrinks the socket's receive buffer (a client that reads slowly fills the server's side sooner).
    init(port: Int, from source: String = "127.0.0.1", receiveBuffer: Int? = nil) throws {
        // Close-on-exec: a process the tests start meanwhile (PostgreSQL) must not inherit a flood's descriptors;
        // it counts them against its own limit and refuses to start.
        descriptor = socket(AF_INET, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw LiveServerError("socket: errno \(errno)") }
        if var size = receiveBuffer.map(CInt.init) {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = Self.address(source, port: 0)
        var remote = Self.address("127.0.0.1", port: port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, connected == 0 else {
            Glibc.close(descriptor)
            throw LiveServerError("connect from \(source): errno \(errno)")
        }
    }

    private static func address(_ host: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        return address
    }

    /// Sends all of `bytes`; false when the server closed or reset the connection first.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Sends `text`.
    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// What the server sends until it closes the connection, `limit` passes or (when given) `marker` has arrived;
    /// `closed` tells whether it closed.
    func readUntilClosed(within limit: Duration, orUntil marker: String? = nil) -> (text: String, closed: Bool) {
        let deadline = ContinuousClock.now + limit
        var received: [UInt8] = []
        while ContinuousClock.now < deadline {
            if let marker, String(decoding: received, as: UTF8.self).contains(marker) { break }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let remaining = deadline - ContinuousClock.now
            let milliseconds = max(1, Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received += buffer[..<count]
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    /// Asks a live server on `port` to open a realtime channel (`com.example.tapper`, sandbox) for `token` over a
    /// raw connection; the connection stays open when it was upgraded.
    static func openRealtime(port: Int, token: String, receiveBuffer: Int? = nil) throws
        -> (status: Int, response: String, connection: RawTCPConnection)
    {
        let connection = try RawTCPConnection(port: port, receiveBuffer: receiveBuffer)
        _ = connection.send(
            """
            GET /v1/realtime HTTP/1.1\r
            Host: 127.0.0.1\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
            Sec-WebSocket-Version: 13\r
            X-GameCenter-Bundle-ID: com.example.tapper\r
            X-GameCenter-Environment: sandbox\r
            Authorization: Bearer \(token)\r
            \r

            """)
        let (text, _) = connection.readUntilClosed(within: .seconds(5), orUntil: "\r\n\r\n")
        return (status(text), text, connection)
    }

    /// Waits up to `limit` for the server to close the connection, without reading anything (a client that never
    /// reads); true once it has.
    func peerClosed(within limit: Duration) -> Bool {
        // POLLRDHUP (Linux): the peer closed its side, seen without reading; Glibc's module does not export it.
        let readHangUp: Int16 = 0x2000
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            var entry = pollfd(fd: descriptor, events: readHangUp, revents: 0)
            if poll(&entry, 1, 100) > 0, entry.revents & (readHangUp | Int16(POLLHUP) | Int16(POLLERR)) != 0 { return true }
        }
        return false
    }

    /// The status of an HTTP response (0 when there is none).
    static func status(_ response: String) -> Int {
        guard response.hasPrefix("HTTP/1.1 ") else { return 0 }
        return Int(response.dropFirst(9).prefix(3)) ?? 0
    }

    /// Closes the connection.
    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    deinit { close() }
}
