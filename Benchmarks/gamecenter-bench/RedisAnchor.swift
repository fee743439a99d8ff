import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The Redis sorted-set anchor of `gamecenter-bench leaderboard`: a `redis-server` started for the run (from
/// Debian's `redis-server` package) and a minimal pipelined RESP client on one blocking socket.
final class RedisAnchor {
    private let process: Process
    private let socket: Int32
    private var buffer: [UInt8] = []
    private var position = 0

    /// Starts `redis-server` on a free port with persistence off (the sorted set is the anchor, not its disk).
    init(executable: String) throws {
        let port = Int.random(in: 20_000...60_000)
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var connected: Int32 = -1
        for _ in 0..<100 {
            connected = Self.connect(port: port)
            if connected >= 0 { break }
            usleep(50_000)
        }
        guard connected >= 0 else {
            process.terminate()
            throw BenchError("redis-server did not accept connections on port \(port)")
        }
        socket = connected
    }

    deinit {
        close(socket)
        // A throwaway server with nothing to save: SIGKILL, because redis-server here did not always act on SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Sends `commands` in one write and reads their replies (the pipelined form), returning integer replies
    /// (nil for other kinds).
    @discardableResult
    func pipeline(_ commands: [[String]]) throws -> [Int?] {
        var out: [UInt8] = []
        out.reserveCapacity(commands.count * 48)
        for command in commands {
            out.append(contentsOf: Array("*\(command.count)\r\n".utf8))
            for argument in command {
                out.append(contentsOf: Array("$\(argument.utf8.count)\r\n".utf8))
                out.append(contentsOf: Array(argument.utf8))
                out.append(contentsOf: [13, 10])
            }
        }
        var sent = 0
        while sent < out.count {
            let n = out[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw BenchError("redis: send failed") }
            sent += n
        }
        return try commands.map { _ in try readReply() }
    }

    private func readReply() throws -> Int? {
        let line = try readLine()
        guard let kind = line.first else { throw BenchError("redis: empty reply") }
        let rest = String(decoding: line.dropFirst(), as: UTF8.self)
        switch kind {
        case UInt8(ascii: ":"): return Int(rest)
        case UInt8(ascii: "+"): return nil
        case UInt8(ascii: "-"): throw BenchError("redis: \(rest)")
        case UInt8(ascii: "$"):
            let length = Int(rest) ?? -1
            if length >= 0 { _ = try readBytes(length + 2) }
            return nil
        case UInt8(ascii: "*"):
            let count = Int(rest) ?? -1
            for _ in 0..<max(count, 0) { _ = try readReply() }
            return count
        default: throw BenchError("redis: unexpected reply")
        }
    }

    private func readLine() throws -> ArraySlice<UInt8> {
        while true {
            if let end = buffer[position...].firstIndex(of: 10), end > position, buffer[end - 1] == 13 {
                let line = buffer[position..<(end - 1)]
                position = end + 1
                return line
            }
            try fill()
        }
    }

    private func readBytes(_ count: Int) throws -> ArraySlice<UInt8> {
        while buffer.count - position < count { try fill() }
        defer { position += count }
        return buffer[position..<(position + count)]
    }

    private func fill() throws {
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let n = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw BenchError("redis: connection closed") }
        buffer.append(contentsOf: chunk[0..<n])
    }

    private static func connect(port: Int) -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 {
            close(fd)
            return -1
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }
}
