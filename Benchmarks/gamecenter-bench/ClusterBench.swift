import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import NIOCore
import OpenGameKit

/// `gamecenter-bench cluster`: one node against two nodes on the same PostgreSQL, in one run. What crosses nodes costs
/// the time between a write on one node and its effect on a device of the other: friend requests pushed to a device
/// connected to the other node (anchor: the same node), a score ranked on the other node, and two players matched
/// when one of them asks through the node that forwards to the queue's owner (anchor: both on the owner). Throughput does not
/// show scaling on a 2-core machine, so single score reports are measured with one node and with two (the load split
/// between them) as CPU per report: the nodes' and PostgreSQL's.
struct ClusterBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster", abstract: "Two nodes on one PostgreSQL vs one: cross-node event and rank latency, CPU per report (nodes, PostgreSQL)."
    )

    @Option(help: "The PostgreSQL database (postgres://USER@HOST:PORT/DB) the nodes share.") var postgres: String
    @Option(help: "Friend requests measured per path (same node, across nodes).") var requests = 100
    @Option(help: "Scores measured for the cross-node rank.") var scores = 100
    @Option(help: "Pairs of players matched per path (both on the queue's owner, one through the other node).") var pairs = 100
    @Option(help: "Seconds to measure single score reports with one node and with two.") var seconds = 5.0
    @Option(help: "Requests in flight at once for the score reports.") var concurrency = 16
    @Option(help: "The gamecenter executable (default: the one beside this one).") var gamecenter: String?
    @Option(
        name: .customLong("node-poll-seconds"),
        help: "Run the nodes with `serve --node-poll-seconds` (the other nodes' notices read from a table) instead of LISTEN/NOTIFY.")
    var nodePollSeconds: Double?

    func run() async throws {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let executable = gamecenter ?? here.deletingLastPathComponent().appendingPathComponent("gamecenter").path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-bench-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = UUID().uuidString.prefix(8).lowercased()
        let bundleID = "com.example.cluster\(run)"
        let manifest = folder.appendingPathComponent("cluster.yaml")
        try """
        bundleID: \(bundleID)
        name: Cluster
        leaderboards:
          - { category: points, default: true, title: { en: Points }, format: integer }

        """.write(to: manifest, atomically: true, encoding: .utf8)
        let node = { (id: String) in
            try ChildServer(
                executable: executable,
                arguments: [
                    "serve", "--port", "0", "--udp-port", "0", "--database", postgres, "--games", manifest.path, "--node-id", "bench-\(run)-\(id)",
                    "--log-level", "warning", "--rate-limit", "reports=0/1", "--rate-limit", "sign-ups=0/1", "--rate-limit", "sign-ins=0/1",
                    "--rate-limit", "friend-requests=0/1", "--rate-limit", "friend-requests-to-one-player=0/1",
                ] + (nodePollSeconds.map { ["--node-poll-seconds", "\($0)"] } ?? []))
        }
        let nodeA = try node("a")
        defer { nodeA.stop() }
        let nodeB = try node("b")
        defer { nodeB.stop() }
        let wakeups = nodePollSeconds.map { "nodes poll for notices every \($0) s" } ?? "nodes woken by LISTEN/NOTIFY"
        print(
            "gamecenter-bench cluster — two nodes on one PostgreSQL, \(wakeups), loopback, release, \(ProcessInfo.processInfo.activeProcessorCount) cores")

        try await eventLatency(nodeA: nodeA, nodeB: nodeB, bundleID: bundleID, folder: folder)
        try await matchLatency(nodeA: nodeA, nodeB: nodeB, bundleID: bundleID, folder: folder)
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        do {
            try await rankLatency(client: client, nodeA: nodeA, nodeB: nodeB, bundleID: bundleID)
            try await reportCost(client: client, nodes: [nodeA, nodeB], bundleID: bundleID)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// Friend requests from devices on node A to devices on node A (the anchor) and on node B: from the send to the
    /// receiving device's event.
    private func eventLatency(nodeA: ChildServer, nodeB: ChildServer, bundleID: String, folder: URL) async throws {
        let (sender, _, _) = try await Self.signedUp("sender", on: nodeA, bundleID: bundleID, folder: folder)
        for (label, receiverNode) in [("same node (anchor)", nodeA), ("across nodes", nodeB)] {
            let (receiver, account, events) = try await Self.signedUp("receiver", on: receiverNode, bundleID: bundleID, folder: folder)
            var iterator = events
            var latencies: [Double] = []
            for _ in 0..<requests {
                let sent = ContinuousClock.now
                try await GKFriendRequest.send(toAccounts: [account], message: nil, in: sender)
                while let event = await iterator.next() {
                    guard case .friendRequestReceived(let request) = event else { continue }
                    latencies.append(Self.milliseconds(ContinuousClock.now - sent))
                    try await request.decline()
                    break
                }
            }
            await receiver.close()
            Self.printLatencies("friend request pushed, \(label)", latencies, "requests")
        }
        await sender.close()
    }

    /// Two players ask for a two-player match at the same moment, and the time until both have it: both on node A,
    /// which owns the game's queue (it took the first request: the anchor), then one on A and one on B, whose
    /// request B forwards to A (and whose device hears of the match through B).
    private func matchLatency(nodeA: ChildServer, nodeB: ChildServer, bundleID: String, folder: URL) async throws {
        let (first, _, _) = try await Self.signedUp("first", on: nodeA, bundleID: bundleID, folder: folder)
        for (label, secondNode) in [("both on the queue's owner (anchor)", nodeA), ("one through the other node", nodeB)] {
            let (second, _, _) = try await Self.signedUp("second", on: secondNode, bundleID: bundleID, folder: folder)
            var latencies: [Double] = []
            for _ in 0..<pairs {
                let started = ContinuousClock.now
                async let one = first.matchmaker.findMatch(for: GKMatchRequest(minPlayers: 2, maxPlayers: 2))
                async let two = second.matchmaker.findMatch(for: GKMatchRequest(minPlayers: 2, maxPlayers: 2))
                let (matchOne, matchTwo) = try await (one, two)
                latencies.append(Self.milliseconds(ContinuousClock.now - started))
                matchOne.disconnect()
                matchTwo.disconnect()
            }
            await second.close()
            Self.printLatencies("two players matched, \(label)", latencies, "pairs")
        }
        await first.close()
    }

    /// A device of the bench's game on `node`, signed up as a new player called `name`, once its realtime channel is
    /// connected: the device, its account name, and its events from then on.
    private static func signedUp(
        _ name: String, on node: ChildServer, bundleID: String, folder: URL
    ) async throws -> (GKGameCenter, account: String, events: AsyncStream<GKGameCenterEvent>.AsyncIterator) {
        let device = GKGameCenter(
            server: URL(string: "http://127.0.0.1:\(node.port)")!, bundleID: bundleID, environment: .sandbox,
            storageDirectory: folder.appendingPathComponent("\(name)-\(UUID().uuidString)"))
        var events = device.events.makeAsyncIterator()
        let account = "\(name)-\(UUID().uuidString.prefix(8).lowercased())"
        try await device.localPlayer.authenticate(.signUp(account: account, password: "bench-password", alias: name))
        while let event = await events.next() { if case .connected = event { break } }
        return (device, account, events)
    }

    /// Prints "`what`: p50 …, p99 … (count `unit`)".
    private static func printLatencies(_ what: String, _ latencies: [Double], _ unit: String) {
        print(String(format: "%@: p50 %.2f ms, p99 %.2f ms (%d %@)", what, percentile(latencies, 0.5), percentile(latencies, 0.99), latencies.count, unit))
    }

    /// Scores reported on node A, and how long until node B ranks them (polled with a leaderboard query every
    /// millisecond, so the figure includes up to a millisecond and a query's time).
    private func rankLatency(client: HTTPClient, nodeA: ChildServer, nodeB: ChildServer, bundleID: String) async throws {
        let device = [(DeviceHeader.bundleID, bundleID), (DeviceHeader.environment, "sandbox")]
        let token = try await BenchPlayers.signUpMany(client: client, port: nodeA.port, count: 1, bundleID: bundleID)[0]
        let headers = device + [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")]
        let encoder = WireCoding.makeEncoder()
        let mine = try encoder.encode(LeaderboardQuery(category: nil, playerScope: .global, timeScope: .allTime, rangeStart: 1, rangeLength: 1))
        var latencies: [Double] = []
        for value in 1...scores {
            let report = try encoder.encode(
                ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: nil, value: Int64(1_000_000 + value), context: 0)]))
            _ = try await Self.post(client, "http://127.0.0.1:\(nodeA.port)/v1/scores", headers, report)
            let reported = ContinuousClock.now
            while true {
                let page = try WireCoding.makeDecoder().decode(
                    LeaderboardPage.self, from: try await Self.post(client, "http://127.0.0.1:\(nodeB.port)/v1/leaderboards/query", headers, mine))
                if page.localPlayerScore?.value == Int64(1_000_000 + value) { break }
                try await Task.sleep(for: .milliseconds(1))
            }
            latencies.append(Self.milliseconds(ContinuousClock.now - reported))
        }
        Self.printLatencies("score acknowledged by node A, ranked by node B", latencies, "scores")
    }

    /// Single score reports with the load on node A alone, then split between A and B: reports/s, and the CPU each
    /// report cost the nodes together and PostgreSQL (every `postgres` process of the machine).
    private func reportCost(client: HTTPClient, nodes: [ChildServer], bundleID: String) async throws {
        let device = [(DeviceHeader.bundleID, bundleID), (DeviceHeader.environment, "sandbox")]
        print("| single score reports | reports/s | p50 ms | p99 ms | nodes' CPU µs/report | PostgreSQL CPU µs/report | errors |")
        print("|---|---|---|---|---|---|---|")
        for (label, used) in [("one node, \(concurrency) in flight", Array(nodes.prefix(1))), ("two nodes, \(concurrency / 2) in flight each", nodes)] {
            let share = concurrency / used.count
            var loads: [LoadRun] = []
            for node in used {
                let tokens = try await BenchPlayers.signUpMany(client: client, port: node.port, count: share, bundleID: bundleID)
                loads.append(
                    LoadRun(
                        client: client, url: "http://127.0.0.1:\(node.port)/v1/scores", headers: device,
                        body: { worker, n in
                            let scores = [ScoreReport(category: nil, value: Int64((worker * 7_919 + n * 104_729) % 2_000_003), context: 0)]
                            return (try? WireCoding.makeEncoder().encode(ScoreReportBatch(reportID: "w\(worker)-\(n)-\(UUID().uuidString)", scores: scores)))
                                ?? Data()
                        }, concurrency: share, seconds: seconds, perWorkerHeaders: tokens.map { [("Authorization", "Bearer \($0)")] }))
            }
            let nodesBefore = nodes.map { $0.cpuSeconds() }.reduce(0, +), databaseBefore = Self.postgresCPUSeconds()
            let results = try await withThrowingTaskGroup(of: LoadRun.Result.self) { group in
                for load in loads { group.addTask { try await load.measure() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let nodesCPU = nodes.map { $0.cpuSeconds() }.reduce(0, +) - nodesBefore, databaseCPU = Self.postgresCPUSeconds() - databaseBefore
            let reports = Double(results.map(\.requests).reduce(0, +))
            let elapsed = results.map(\.elapsed).max() ?? 1
            print(
                String(
                    format: "| %@ | %.0f | %.2f | %.2f | %.0f | %.0f | %d |", label, reports / elapsed, results.map(\.p50).max() ?? 0,
                    results.map(\.p99).max() ?? 0, nodesCPU / reports * 1e6, databaseCPU / reports * 1e6, results.map(\.errors).reduce(0, +)))
        }
    }

    /// CPU seconds used so far by every process named `postgres` (the server and its backends).
    static func postgresCPUSeconds() -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where entry.allSatisfy(\.isNumber) {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.range(of: ") ", options: .backwards),
                stat[stat.index(after: open)..<close.lowerBound] == "postgres"
            else { continue }
            let fields = stat[close.upperBound...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            total += (user + system) / ticks
        }
        return total
    }

    private static func post(_ client: HTTPClient, _ url: String, _ headers: [(String, String)], _ body: Data) async throws -> Data {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(contentsOf: headers)
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok || response.status == .created else { throw BenchError("\(url): HTTP \(response.status.code)") }
        return Data(bytes.readableBytesView)
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    private static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}
