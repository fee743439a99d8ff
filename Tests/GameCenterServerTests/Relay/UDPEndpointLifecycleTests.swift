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

    static func openDescriptors() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
    }

    @Test func initBindsButStartsNoThreadAndDeinitClosesTheSockets() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("udp-life-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Database.withDatabase(url: "sqlite:\(folder.path)/db.sqlite") { database in
            let relay = RelayService(
                database: database, recorder: MatchRecorder(database: database, bus: InProcessEventBus()),
                clock: ServerClock(isAdjustable: false), logger: Logger(label: "test"))
            let threadsBefore = Self.threadNames().filter { $0 == "gamecenter UDP" }.count
            let descriptorsBefore = Self.openDescriptors()
            var endpoint: UDPEndpoint? = try UDPEndpoint(host: "127.0.0.1", port: 0, relay: relay, logger: Logger(label: "test"), threads: 2)
            #expect(endpoint!.port > 0)
            #expect(Self.openDescriptors() == descriptorsBefore + 2, "one bound socket per receive thread")
            #expect(Self.threadNames().filter { $0 == "gamecenter UDP" }.count == threadsBefore, "no thread before run()")
            endpoint = nil
            #expect(Self.openDescriptors() == descriptorsBefore)
        }
    }
}
