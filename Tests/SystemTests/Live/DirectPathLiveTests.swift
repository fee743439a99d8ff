import Foundation
import GameCenterProtocol
import LANTestSupport
import NetworkFaultProxy
@testable import OpenGameKit
import Testing

/// Matches peer to peer against real server processes: members reach each other directly and the relay carries
/// nothing of their data; reliable data keeps its order while the paths come up; relay-only games and requests keep
/// every byte on the relay; and, across the two hosts of `scripts/lan-netns.sh`, a firewall rule that blocks the direct
/// path between the hosts sends those pairs through the relay and back, while the pair on one host stays direct.
@Suite(.serialized, .timeLimit(.minutes(3))) struct DirectPathLiveTests {
    static let game = RelayLiveTests.directGame

    static func allDirect(_ matches: [GKMatch]) async throws {
        try await waitUntil("every member reaches every other directly", within: .seconds(10)) {
            matches.allSatisfy { $0.directPlayerIDs.count == matches.count - 1 }
        }
    }

    @Test func membersOnOneHostReachEachOtherDirectlyAndTheRelayCarriesNoneOfTheirData() async throws {
        let server = try await RelayLiveTests.server()
        let (devices, matches) = try await RelayLiveTests.match([server.url, server.url, server.url], game: Self.game)
        let inboxes = matches.map(MatchInbox.init)
        let ids = devices.map(RelayLiveTests.id)
        try await Self.allDirect(matches)
        let before = try await RelayLiveTests.statistics(server)
        for (i, match) in matches.enumerated() {
            try await RelayLiveTests.sendNumbered(match, tag: "r\(i)", count: 300)
        }
        try await waitUntil("every reliable message arrived", within: .seconds(30)) {
            (0..<3).allSatisfy { i in (0..<3).allSatisfy { j in i == j || inboxes[j].texts(from: ids[i]).filter { $0.hasPrefix("r") }.count == 300 } }
        }
        // Unreliable data may be lost (a burst can overflow a loaded machine's socket buffers): it is sent in small
        // rounds until some of every member's has reached every other.
        let unreliableArrived = {
            (0..<3).allSatisfy { i in (0..<3).allSatisfy { j in i == j || !inboxes[j].texts(from: ids[i]).filter { $0.hasPrefix("u") }.isEmpty } }
        }
        for round in 0..<20 where !unreliableArrived() {
            for (i, match) in matches.enumerated() {
                for n in 0..<5 { try match.sendData(toAllPlayers: Data("u\(i):\(round * 5 + n)".utf8), with: .unreliable) }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        for i in 0..<3 {
            for j in 0..<3 where i != j {
                #expect(inboxes[j].texts(from: ids[i]).filter { $0.hasPrefix("r") } == RelayLiveTests.numbered("r\(i)", 300))
                #expect(!inboxes[j].texts(from: ids[i]).filter { $0.hasPrefix("u") }.isEmpty, "unreliable data arrived directly too")
            }
        }
        let after = try await RelayLiveTests.statistics(server)
        #expect((after["reliableAccepted"] ?? 0) == (before["reliableAccepted"] ?? 0), "no reliable message went through the relay")
        #expect((after["unreliableForwarded"] ?? 0) == (before["unreliableForwarded"] ?? 0), "no unreliable message went through the relay")

        // A message too large for a datagram goes through the relay, in its place among the direct ones.
        try matches[0].sendData(toAllPlayers: Data("big-before".utf8), with: .reliable)
        try matches[0].sendData(toAllPlayers: Data(String(repeating: "B", count: 20_000).utf8), with: .reliable)
        try matches[0].sendData(toAllPlayers: Data("big-after".utf8), with: .reliable)
        try await waitUntil("the large message and the one after it arrived") { inboxes[1].texts(from: ids[0]).last == "big-after" }
        #expect(inboxes[1].texts(from: ids[0]).suffix(3).map { $0.count > 100 ? "BIG" : $0 } == ["big-before", "BIG", "big-after"])
        let relayed = try await RelayLiveTests.statistics(server)
        #expect((relayed["reliableAccepted"] ?? 0) - (after["reliableAccepted"] ?? 0) == 1, "only the large message went through the relay")
        try await server.stop()
    }

    @Test func reliableDataSentFromTheFirstMomentKeepsItsOrderWhileThePathsBecomeDirect() async throws {
        let server = try await RelayLiveTests.server()
        let (devices, matches) = try await RelayLiveTests.match([server.url, server.url], game: Self.game)
        let inbox = MatchInbox(matches[1])
        let a = RelayLiveTests.id(devices[0])
        // Sent while the paths are still being probed: the first go through the relay, the rest directly.
        try await RelayLiveTests.sendNumbered(matches[0], tag: "a", count: 2_000)
        try await waitUntil("every message arrived", within: .seconds(30)) { inbox.texts(from: a).count >= 2_000 }
        #expect(inbox.texts(from: a) == RelayLiveTests.numbered("a", 2_000))
        try await waitUntil("the path became direct") { matches[0].directPlayerIDs == [RelayLiveTests.id(devices[1])] }
        try await server.stop()
    }

    @Test func aRelayOnlyGameOrRequestKeepsThoseMembersOnTheRelay() async throws {
        let server = try await RelayLiveTests.server()
        // The game's manifest says relayOnly: nobody is direct, and the relay carries everything.
        let (devices, matches) = try await RelayLiveTests.match([server.url, server.url], game: RelayLiveTests.game)
        let inbox = MatchInbox(matches[1])
        let before = try await RelayLiveTests.statistics(server)
        try await RelayLiveTests.sendNumbered(matches[0], tag: "m", count: 50)
        try await waitUntil("the relay-only game's messages arrived") { inbox.texts(from: RelayLiveTests.id(devices[0])).count == 50 }
        let after = try await RelayLiveTests.statistics(server)
        #expect((after["reliableAccepted"] ?? 0) - (before["reliableAccepted"] ?? 0) == 50)

        // A request with relayOnly: that member offers no address and takes none; the other two are direct.
        var players: [GKGameCenter] = []
        for i in 0..<3 { players.append(try await RelayLiveTests.player(server.url, "Q\(i)", game: Self.game)) }
        let tasks = players.enumerated().map { i, device in
            Task {
                let request = GKMatchRequest(minPlayers: 3, maxPlayers: 3)
                request.relayOnly = i == 0
                return try await device.matchmaker.findMatch(for: request)
            }
        }
        var mixed: [GKMatch] = []
        for task in tasks { mixed.append(try await task.value) }
        let ids = players.map(RelayLiveTests.id)
        try await waitUntil("the two members without relayOnly reach each other directly", within: .seconds(10)) {
            mixed[1].directPlayerIDs == [ids[2]] && mixed[2].directPlayerIDs == [ids[1]]
        }
        // Longer than the probes would need (2 s): the relay-only member is still reached through the relay only.
        try await Task.sleep(for: .seconds(3))
        #expect(mixed[0].directPlayerIDs.isEmpty)
        // The other two are direct again if a busy machine kept their path silent for two seconds (it falls back to
        // the relay, then comes back with the next probe).
        try await waitUntil("the two members without relayOnly are still direct", within: .seconds(10)) {
            mixed[1].directPlayerIDs == [ids[2]] && mixed[2].directPlayerIDs == [ids[1]]
        }
        #expect(mixed[0].directPlayerIDs.isEmpty)
        let mixedInbox = MatchInbox(mixed[0])
        try mixed[1].sendData(toAllPlayers: Data("to all".utf8), with: .reliable)
        try await waitUntil("the relay-only member heard the others") { mixedInbox.texts(from: ids[1]) == ["to all"] }
        try await server.stop()
    }

    /// One member on host A (with the server), two on host B. The test blocks every datagram from A to B but the
    /// relay's (an nftables rule in B's namespace) while they send, then lifts it.
    @Test(
        .enabled(
            if: TwoHosts.hosts != nil || ProcessInfo.processInfo.environment["GAMECENTER_REQUIRE_LAN_PEERS"] == "1", Comment(rawValue: TwoHosts.skipMessage)))
    func acrossTwoHostsAFirewalledPairGoesThroughTheRelayAndBackWithoutLosingOrReorderingData() async throws {
        let hosts = try #require(TwoHosts.hosts, "GAMECENTER_REQUIRE_LAN_PEERS=1, but \(TwoHosts.skipMessage)")
        let ip = try #require(ChildProcess.which("ip"), "the ip command (iproute2) is missing")
        let nft = try #require(ChildProcess.which("nft"), "the nft command (nftables) is missing; scripts/test.sh installs it")
        let probe = ChildProcess.built("MatchProbe").path
        try #require(FileManager.default.isExecutableFile(atPath: probe), "MatchProbe not built at \(probe); run `swift build` first")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("direct-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)

        let server = try LiveServer(engine: "sqlite", games: try RelayLiveTests.games())
        server.launcher = [ip, "netns", "exec", hosts.a.namespace]
        try await server.start(extraArguments: ["--host", "0.0.0.0"])
        let url = "http://169.254.77.1:\(server.port)"
        func member(_ name: String, on host: TwoHosts.Host) async throws -> (status: Int32, output: String) {
            try await ChildProcess.run(
                ip,
                [
                    "netns", "exec", host.namespace, probe, "--server", url, "--game", Self.game, "--name", name, "--players", "3",
                    "--folder", folder.path, "--timeout", "100",
                ], timeout: .seconds(110))
        }
        async let p1 = member("P1", on: hosts.a)
        async let p2 = member("P2", on: hosts.b)
        async let p3 = member("P3", on: hosts.b)

        func read(_ name: String) -> String? { try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8) }
        func direct(_ name: String) -> Set<String> { Set((read("\(name).direct") ?? "").split(separator: "\n").map(String.init)) }
        let ruleTable = "ogkdirect"
        func firewall(_ arguments: [String]) async throws {
            let result = try await ChildProcess.run(ip, ["netns", "exec", hosts.b.namespace, nft] + arguments, timeout: .seconds(10))
            try #require(result.status == 0, "nft \(arguments.joined(separator: " ")): \(result.output)")
        }
        var problem: String?
        do {
            try await waitUntil("the three members are in the match", within: .seconds(60)) {
                ["P1", "P2", "P3"].allSatisfy { read("\($0).ready") != nil }
            }
            let id = Dictionary(uniqueKeysWithValues: ["P1", "P2", "P3"].map { ($0, read("\($0).id") ?? "") })
            try await waitUntil("every pair is direct", within: .seconds(15)) {
                direct("P1") == [id["P2"]!, id["P3"]!] && direct("P2") == [id["P1"]!, id["P3"]!] && direct("P3") == [id["P1"]!, id["P2"]!]
            }
            // Host B takes nothing from host A but the relay's datagrams.
            try await firewall(["add", "table", "inet", ruleTable])
            try await firewall(["add", "chain", "inet", ruleTable, "input", "{ type filter hook input priority 0; }"])
            try await firewall([
                "add", "rule", "inet", ruleTable, "input", "ip", "saddr", "169.254.77.1", "udp", "sport", "!=", "\(server.boundUDPPort)", "drop",
            ])
            try await waitUntil("the pairs across the hosts fall back to the relay", within: .seconds(10)) {
                direct("P1").isEmpty && direct("P2") == [id["P3"]!] && direct("P3") == [id["P2"]!]
            }
            // Data keeps flowing through the relay for a while; the pair on host B stays direct.
            try await Task.sleep(for: .seconds(2))
            #expect(direct("P2") == [id["P3"]!] && direct("P3") == [id["P2"]!], "the pair on one host stays direct")
            try await firewall(["delete", "table", "inet", ruleTable])
            try await waitUntil("the pairs across the hosts are direct again", within: .seconds(10)) {
                direct("P1") == [id["P2"]!, id["P3"]!] && direct("P2") == [id["P1"]!, id["P3"]!]
            }
            try await Task.sleep(for: .seconds(1))
        } catch {
            problem = "\(error)"
            _ = try? await ChildProcess.run(ip, ["netns", "exec", hosts.b.namespace, nft, "delete", "table", "inet", ruleTable], timeout: .seconds(10))
        }
        try Data().write(to: folder.appendingPathComponent("stop"))
        let results = try await [p1, p2, p3]
        let outputs = zip(["P1", "P2", "P3"], results).map { "\($0):\n\($1.output)" }.joined(separator: "\n")
        #expect(problem == nil, "\(problem ?? ""): \(outputs)")
        for (name, result) in zip(["P1", "P2", "P3"], results) {
            #expect(result.status == 0, "\(name) did not get every message once and in order:\n\(outputs)")
            #expect(result.output.contains("errors none"), "\(name):\n\(outputs)")
        }
        print("direct paths across two hosts:\n\(outputs)")
        try await server.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
