import Foundation
import GameCenterStorage
import Logging
import Testing
@testable import GameCenterServer

/// The UDP endpoint's life: `init` only binds, the receive threads live inside `run()`, and an endpoint that never
/// ran leaves no socket behind.
@Suite(.serialized) struct UDPEndpointLifecycleTests {
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// The inodes of this process's open sockets (other suites open and close sockets meanwhile: counting every
    /// descriptor would not tell whose they are).
    static func openSocketInodes() -> Set<String> {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(
            descriptors.compactMap { descriptor -> String? in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"),
                    target.hasPrefix("socket:[")
                else { return nil }
                return String(target.dropFirst("socket:[".count).dropLast())
            })
    }

    /// The inodes of the UDP sockets bound to `port` on this machine (/proc/net/udp).
    static func udpSocketInodes(boundTo port: Int) -> Set<String> {
        // Read to the end: the kernel hands the table out a page at a time (a single read returns the first page).
        guard let file = FileHandle(forReadingAtPath: "/proc/net/udp") else { return [] }
        defer { try? file.close() }
        let table = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        let suffix = ":" + String(format: "%04X", port)
        return Set(
            table.split(separator: "\n").dropFirst().compactMap { line -> String? in
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[1].hasSuffix(suffix) else { return nil }
                return String(fields[9])
            })
    }

    @Test func initBindsButStartsNoThreadAndDeinitClosesTheSockets() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("udp-life-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Database.withDatabase(url: "sqlite:\(folder.path)/db.sqlite") { database in
            let relay = RelayService(
                database: database, recorder: MatchRecorder(database: database, bus: InProcessEventBus()),
                clock: ServerClock(isAdjustable: false), logger: Logger(label: "test"))
            let threadsBefore = Self.threadNames().filter { $0 == "gamecenter UDP" }.count
            var endpoint: UDPEndpoint? = try UDPEndpoint(host: "127.0.0.1", port: 0, relay: relay, logger: Logger(label: "test"), threads: 2)
            let port = try #require(endpoint?.port)
            #expect(port > 0)
            let sockets = Self.udpSocketInodes(boundTo: port).intersection(Self.openSocketInodes())
            #expect(sockets.count == 2, "one bound socket per receive thread")
            #expect(Self.threadNames().filter { $0 == "gamecenter UDP" }.count == threadsBefore, "no thread before run()")
            endpoint = nil
            #expect(Self.openSocketInodes().isDisjoint(with: sockets), "the sockets are closed")
        }
    }
}
