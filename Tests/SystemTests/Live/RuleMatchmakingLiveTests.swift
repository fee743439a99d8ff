import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GameCenterProtocol
import NetworkFaultProxy
import OpenGameKit
import Synchronization
import Testing

/// Apple's rule-based matchmaking through the SDK against real server processes, on every engine: the example game's
/// queues (`games/tapper.yaml`) match by region and skill, widen their skill window as the server's clock moves, and
/// assign hosted players to balanced teams; the properties come back on the match.
@Suite(.serialized, .timeLimit(.minutes(3))) struct RuleMatchmakingLiveTests {
    static func request(_ queue: String, _ properties: [String: GKMatchProperty], min: Int = 2, max: Int = 2) -> GKMatchRequest {
        let request = GKMatchRequest(minPlayers: min, maxPlayers: max)
        request.queueName = queue
        request.properties = properties
        return request
    }

    /// The value of the server's Prometheus metric `name` with (at least) these labels, if it has one.
    static func metric(_ name: String, _ labels: [String: String], on server: LiveServer) async throws -> Double? {
        var request = URLRequest(url: server.url.appendingPathComponent("metrics"))
        request.setValue("Bearer \(LeaderboardsLiveTests.adminKey)", forHTTPHeaderField: "Authorization")
        let text = String(decoding: try await URLSession.shared.data(for: request).0, as: UTF8.self)
        let line = text.split(separator: "\n").first { line in
            line.hasPrefix("\(name){") && labels.allSatisfy { line.contains("\($0.key)=\"\($0.value)\"") }
        }
        return line.flatMap { Double($0.split(separator: " ").last!) }
    }

    /// The studio's view of a queue's metrics (`GET /admin/v1/games/…/matchmaking/queues/…/metrics`), or the status
    /// and body of a refusal.
    static func queueMetrics(_ queue: String, of bundleID: String = "com.example.tapper", on server: LiveServer) async throws -> (
        QueueMetricsSeries?, status: Int, body: String
    ) {
        var request = URLRequest(url: server.url.appendingPathComponent("admin/v1/games/\(bundleID)/matchmaking/queues/\(queue)/metrics"))
        request.setValue("Bearer \(LeaderboardsLiveTests.adminKey)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status == 200 ? try WireCoding.makeDecoder().decode(QueueMetricsSeries.self, from: data) : nil, status, String(decoding: data, as: UTF8.self))
    }

    /// The studio's view of the request `playerID` waits with (`GET /admin/v1/games/…/matchmaking/players/…/request`),
    /// or the status and error code of a refusal.
    static func studioView(of playerID: String, in bundleID: String = "com.example.tapper", on server: LiveServer) async throws -> (
        MatchRequestStatus?, status: Int, code: String?
    ) {
        var request = URLRequest(url: server.url.appendingPathComponent("admin/v1/games/\(bundleID)/matchmaking/players/\(playerID)/request"))
        request.setValue("Bearer \(LeaderboardsLiveTests.adminKey)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            return (nil, status, (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["code"] as? String)
        }
        return (try WireCoding.makeDecoder().decode(MatchRequestStatus.self, from: data), status, nil)
    }

    @Test(arguments: LiveServer.engines)
    func theRankedQueueMatchesByRegionAndSkillAndWidensAsTheClockMoves(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start(extraArguments: ["--admin-key", LeaderboardsLiveTests.adminKey, "--test-clock"])
        let (ann, _) = try await Devices.signedUp(server, alias: "Ann")
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        let (cid, _) = try await Devices.signedUp(server, alias: "Cid")
        let (dan, _) = try await Devices.signedUp(server, alias: "Dan")
        let ranked = "com.example.tapper.Ranked"

        // Bob and Dan (us) are 48 apart: too far until both have waited 20 s. Ann and Cid (eu) are 15 apart.
        let bobMatched = Mutex(false)
        let bobFinds = Task {
            let match = try await bob.matchmaker.findMatch(for: Self.request(ranked, ["region": "us", "skill": 12]))
            bobMatched.withLock { $0 = true }
            return match
        }
        let danFinds = Task { try await dan.matchmaker.findMatch(for: Self.request(ranked, ["region": "us", "skill": 60])) }
        let annFinds = Task { try await ann.matchmaker.findMatch(for: Self.request(ranked, ["region": "eu", "skill": 10])) }
        let cidMatch = try await cid.matchmaker.findMatch(for: Self.request(ranked, ["region": "eu", "skill": 25]))
        let annMatch = try await annFinds.value
        #expect(annMatch.matchID == cidMatch.matchID)
        #expect(annMatch.properties == ["region": "eu", "skill": 10, "gc": [:]])
        #expect(annMatch.playerProperties == [cid.localPlayer.playerID: ["region": "eu", "skill": 25, "gc": [:]]])
        // Bob's and Dan's requests were sent at the same time as Ann's and Cid's, but may reach the server after them.
        var activity = 0
        for _ in 0..<100 {
            activity = try await ann.matchmaker.queryQueueActivity(ranked)
            if activity >= 4 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(activity == 4, "the four requests of the last minute")

        try await Task.sleep(for: .seconds(1.5))
        #expect(!bobMatched.withLock { $0 }, "Bob and Dan, 48 apart, wait until their skill window widens")
        // Bob asks why: Dan is the one other request; of the same version and region, he fails the skill rule.
        let why = try #require(try await bob.matchmaker.explainWaiting())
        #expect(why.waiting == 1 && why.compatible == 1)
        #expect((1...30).contains(why.secondsInQueue), "Bob has waited since the start: \(why.secondsInQueue) s")
        #expect(why.stages.map(\.name) == ["size", "SameVersion", "SameRegion", "SkillDifference"])
        #expect(why.stages.last == GKMatchRuleStage(name: "SkillDifference", type: "match", tried: 1, passed: 0))
        #expect(why.blockingRules == ["SkillDifference"])
        #expect(why.estimateSamples == 2 && why.estimatedWaitSeconds == nil, "Ann's and Cid's waits, too few for an estimate")
        // Where the skill window's expansion stands for Bob: 20 until he has waited 10 s, then 40, then 100 after 20 s.
        let expansion = try #require(why.expansions.first)
        #expect(why.expansions.count == 1 && expansion.rule == "SkillDifference" && expansion.steps == 2)
        #expect(expansion.expression.hasPrefix("agedValues(avg(requests[].secondsInQueue), `20`"))
        #expect(expansion.value == (expansion.seconds >= 10 ? 40 : 20) && expansion.step == (expansion.seconds >= 10 ? 1 : 0), "\(expansion)")
        #expect(try await ann.matchmaker.explainWaiting() == nil, "Ann's request was matched")
        // The studio sees Bob's request as he does; Ann waits with none.
        let (studio, _, _) = try await Self.studioView(of: bob.localPlayer.playerID, on: server)
        #expect(studio?.state == .waiting && studio?.explanation?.blockingRules == ["SkillDifference"], "\(String(describing: studio))")
        #expect(studio?.explanation?.stages == why.stages)
        #expect(try await Self.studioView(of: ann.localPlayer.playerID, on: server).code == "matchmaking.no_such_request")
        try await LeaderboardsLiveTests.advanceClock(server, hours: 20.0 / 3600)
        let bobMatch = try await bobFinds.value
        let danMatch = try await danFinds.value
        #expect(try await bob.matchmaker.explainWaiting() == nil)
        // The queue's figures: four requests matched, none waiting, each rule's answers (Bob and Dan failed the skill
        // rule before the window widened).
        let queue = ["queue": ranked, "environment": "sandbox"]
        #expect(try await Self.metric("matchmaking_queue_wait_seconds_count", queue.merging(["result": "matched"]) { $1 }, on: server) == 4)
        #expect(try await Self.metric("matchmaking_queue_requests", queue, on: server) == 0)
        let skill = queue.merging(["rule": "SkillDifference"]) { $1 }
        #expect(try await Self.metric("matchmaking_rule_results", skill.merging(["result": "true"]) { $1 }, on: server) == 2)
        #expect(try await Self.metric("matchmaking_rule_results", skill.merging(["result": "false"]) { $1 }, on: server) ?? 0 >= 1)
        #expect(bobMatch.matchID == danMatch.matchID && bobMatch.matchID != annMatch.matchID)
        #expect(danMatch.playerProperties?[bob.localPlayer.playerID]?["skill"] == 12)

        // The studio's view, bucket by bucket (Apple's queue metrics): Ann asks again and cancels; four requests
        // matched, Bob and Dan after the 20 s the clock moved, in two matches of two; the skill rule's answers.
        let annAgain = Task { try await ann.matchmaker.findMatch(for: Self.request(ranked, ["region": "eu", "skill": 10])) }
        for _ in 0..<100 where try await ann.matchmaker.queryQueueActivity(ranked) < 5 { try await Task.sleep(for: .milliseconds(50)) }
        ann.matchmaker.cancel()
        _ = await annAgain.result
        var figures: QueueMetricsSeries?
        for _ in 0..<100 {
            figures = try await Self.queueMetrics(ranked, on: server).0
            if figures?.dataPoints.contains(where: { $0.requests["CANCELED"] != nil }) == true { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let points = try #require(figures).dataPoints
        #expect(points.count == 32 && figures?.granularity == "PT15M")
        let matched = points.compactMap { $0.requests["MATCHED"] }
        #expect(matched.reduce(0) { $0 + $1.count } == 4 && matched.reduce(0) { $0 + $1.playerCount } == 4)
        #expect(matched.contains { $0.p95SecondsInQueue >= 20 }, "Bob and Dan waited 20 s: \(matched)")
        #expect(points.compactMap { $0.requests["CANCELED"] }.reduce(0) { $0 + $1.count } == 1)
        #expect(points.reduce(0) { $0 + $1.sessions.count } == 2 && points.contains { $0.sessions.averagePlayerCount == 2 })
        #expect(points.reduce(0) { $0 + ($1.rules["SkillDifference"]?.trueCount ?? 0) } == 2)
        #expect(points.reduce(0) { $0 + $1.queueSizes.count } >= 3, "a pass at each arrival at least")
        let unknownQueue = try await Self.queueMetrics("com.example.tapper.Nope", on: server)
        #expect(unknownQueue.status == 400 && unknownQueue.body.contains("matchmaking.unknown_queue"), "\(unknownQueue.status) \(unknownQueue.body)")

        // A queue the game does not have, and a property the SDK keeps for Game Center.
        let unknown = await #expect(throws: GKError.self) {
            try await ann.matchmaker.findMatch(for: Self.request("com.example.tapper.ranked", ["skill": 1]))
        }
        #expect(unknown?.serverCode == "matchmaking.unknown_queue" && unknown?.code == .matchRequestInvalid)
        #expect(unknown?.message.contains("com.example.tapper.Ranked") == true, "the error lists the game's queues")
        let reserved = await #expect(throws: GKError.self) { try await ann.matchmaker.findMatch(for: Self.request(ranked, ["gc": 1])) }
        #expect(reserved?.code == .matchRequestInvalid)
        for match in [annMatch, cidMatch, bobMatch, danMatch] { match.disconnect() }

        // The server stores its counts when it stops (every 15 s besides): the next run on the same database answers
        // them. A shutdown that had to be forced (the known slow-shutdown bug under load) may lose the last 15 s.
        let exitStatus = try await server.stop()
        try await server.start(extraArguments: ["--admin-key", LeaderboardsLiveTests.adminKey])
        if exitStatus == 0 {
            let stored = try #require(try await Self.queueMetrics(ranked, on: server).0).dataPoints
            #expect(stored.compactMap { $0.requests["MATCHED"] }.reduce(0) { $0 + $1.count } == 4)
            #expect(stored.compactMap { $0.requests["CANCELED"] }.reduce(0) { $0 + $1.count } == 1)
            #expect(stored.reduce(0) { $0 + $1.sessions.count } == 2)
        }
        try await server.stop()
    }

    /// The team a hosted match gave `player`, as one member's `GKMatchedPlayers` tells it.
    static func team(of player: String, in players: GKMatchedPlayers, own: String) -> String? {
        let properties = player == own ? players.properties : players.playerProperties?[player]
        guard case .object(let gc)? = properties?["gc"], case .string(let team)? = gc["team"] else { return nil }
        return team
    }

    @Test(arguments: LiveServer.engines)
    func invitedFriendsEnterTheQueueWithTheInviterWithTheirOwnPropertiesAndTeam(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start(extraArguments: ["--admin-key", LeaderboardsLiveTests.adminKey])
        let (ann, _) = try await Devices.signedUp(server, alias: "Ann")
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        let (cid, _) = try await Devices.signedUp(server, alias: "Cid")
        let (dan, _) = try await Devices.signedUp(server, alias: "Dan")
        try await MatchmakingLiveTests.befriend(ann, bob)
        let bobID = bob.localPlayer.playerID
        let bobInvites = InviteInbox()
        bobInvites.watch(bob)

        // Ranked (two players, skill within 20): Ann (10) invites Bob, whom the rules see at 25 as she says. The two
        // fill the match alone, and each sees the other's properties.
        let ranked = Self.request("com.example.tapper.Ranked", ["region": "eu", "skill": 10])
        ranked.playersToInvite = [bobID]
        ranked.recipientProperties = [bobID: ["region": "eu", "skill": 25]]
        let annRanked = Task { try await ann.matchmaker.findMatch(for: ranked) }
        let bobRanked = try await bob.matchmaker.match(for: try await bobInvites.next())
        let annMatch = try await annRanked.value
        #expect(annMatch.matchID == bobRanked.matchID)
        #expect(annMatch.playerProperties == [bobID: ["region": "eu", "skill": 25, "gc": [:]]])
        #expect(bobRanked.properties == ["region": "eu", "skill": 25, "gc": [:]])
        #expect(bobRanked.playerProperties == [ann.localPlayer.playerID: ["region": "eu", "skill": 10, "gc": [:]]])
        annMatch.disconnect()
        bobRanked.disconnect()

        // Teams (four hosted players, two balanced teams, invited players together): Ann (1) brings Bob (4); with
        // Cid (2) alone the party waits, and Dan (3) completes it. Only Bob's own 4 balances the teams (1 + 4 against
        // 2 + 3) with the friends together.
        let teams = Self.request("com.example.tapper.Teams", ["skill": 1], min: 4, max: 4)
        teams.playersToInvite = [bobID]
        teams.recipientProperties = [bobID: ["skill": 4]]
        let annTeams = Task { try await ann.matchmaker.findMatchedPlayers(teams) }
        let bobTeams = Task { try await bob.matchmaker.findPlayers(for: try await bobInvites.next()) }
        let cidTeams = Task { try await cid.matchmaker.findMatchedPlayers(Self.request("com.example.tapper.Teams", ["skill": 2], min: 4, max: 4)) }
        try await waitUntil("the party and Cid wait in the queue") {
            try await cid.matchmaker.queryQueueActivity("com.example.tapper.Teams") == 2
        }
        #expect(try await isStillRunning(annTeams, after: .milliseconds(500), because: "three players cannot make four"))
        // The studio asks about Bob: he waits in Ann's party (two players), with Cid the one other request.
        let (bobSeen, _, _) = try await Self.studioView(of: bobID, on: server)
        #expect(bobSeen?.state == .waiting && bobSeen?.players == 2 && bobSeen?.explanation?.waiting == 1, "\(String(describing: bobSeen))")
        let danPlayers = try await dan.matchmaker.findMatchedPlayers(Self.request("com.example.tapper.Teams", ["skill": 3], min: 4, max: 4))
        let annPlayers = try await annTeams.value
        let everyone = Set([ann, bob, cid, dan].map(\.localPlayer.playerID))
        #expect(Set(annPlayers.playerIDs) == everyone && Set(danPlayers.playerIDs) == everyone)
        #expect(Set(try await bobTeams.value) == everyone)
        #expect(Set(try await cidTeams.value.playerIDs) == everyone)
        #expect(annPlayers.playerProperties?[bobID]?["skill"] == 4)
        let annTeam = Self.team(of: ann.localPlayer.playerID, in: annPlayers, own: ann.localPlayer.playerID)
        #expect(annTeam != nil && annTeam == Self.team(of: bobID, in: annPlayers, own: ann.localPlayer.playerID), "the friends play together")
        #expect(Self.team(of: dan.localPlayer.playerID, in: danPlayers, own: dan.localPlayer.playerID) != annTeam)

        // Properties for a player who is not invited are refused before anything is sent.
        let stranger = Self.request("com.example.tapper.Ranked", ["region": "eu", "skill": 10])
        stranger.recipientProperties = [cid.localPlayer.playerID: ["skill": 1]]
        let refused = await #expect(throws: GKError.self) { try await ann.matchmaker.findMatch(for: stranger) }
        #expect(refused?.code == .matchRequestInvalid)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func playersOfAPartyMatchThroughAQueueWhoseRuleComparesTheirCode(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (ann, _) = try await Devices.signedUp(server, alias: "Ann")
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        let (cid, _) = try await Devices.signedUp(server, alias: "Cid")
        let hosted = try await PartyLiveTests.start(ann)
        let code = try #require(hosted.partyCode)
        let joined = try await PartyLiveTests.start(bob, code: code)
        let queue = "com.example.tapper.Party"
        func request(_ activity: GKGameActivity?) throws -> GKMatchRequest {
            let request = try #require(activity.map { $0.makeMatchRequest() } ?? GKMatchRequest(minPlayers: 2, maxPlayers: 4))
            request.queueName = queue
            return request
        }

        // Ann (the party's host) and Cid (no party) wait: the queue's rule compares party codes.
        let annFinds = Task { try await ann.matchmaker.findMatch(for: try request(hosted)) }
        let cidFinds = Task { try await cid.matchmaker.findMatch(for: try request(nil)) }
        try await waitUntil("Ann and Cid wait in the queue") { try await cid.matchmaker.queryQueueActivity(queue) == 2 }
        #expect(try await isStillRunning(annFinds, after: .milliseconds(500), because: "Cid has no party code: the queue's rule keeps them apart"))
        // Bob joins with the party's code: he and Ann match; the rules saw the code as a property.
        let bobMatch = try await bob.matchmaker.findMatch(for: try request(joined))
        let annMatch = try await annFinds.value
        #expect(annMatch.matchID == bobMatch.matchID)
        #expect(annMatch.playerProperties?[bob.localPlayer.playerID]?["partyCode"] == .string(code))
        #expect(try await cid.matchmaker.explainWaiting()?.waiting == 0, "Cid waits alone")
        cid.matchmaker.cancel()
        _ = await cidFinds.result
        for match in [annMatch, bobMatch] { match.disconnect() }
        try await server.stop()
    }

    @Test func classicRequestsOfAGameWhoseQueueListsItWaitInThatQueue() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("classic-queue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
        bundleID: com.example.classic
        name: Classic
        matchmaking:
          fillSeconds: 1
          ruleSets:
            - referenceName: com.example.classic.Pairs
              ruleLanguageVersion: 1
              minPlayers: 2
              maxPlayers: 2
              rules:
                - { referenceName: SameVersion, description: same version, type: COMPATIBLE, expression: "areCompatibleAppVersions(requests[0], requests[1])" }
          queues:
            - referenceName: com.example.classic.Main
              ruleSet: com.example.classic.Pairs
              classicMatchmakingBundleIds: [com.example.classic, com.example.older]
        """.write(to: folder.appendingPathComponent("classic.yaml"), atomically: true, encoding: .utf8)
        let server = try LiveServer(engine: "sqlite", games: folder.path)
        try await server.start()
        let game = "com.example.classic", queue = "com.example.classic.Main"
        let old = try await MatchmakingLiveTests.player(server, "Old", game: game)
        let new = try await MatchmakingLiveTests.player(server, "New", game: game)
        let wide = try await MatchmakingLiveTests.player(server, "Wide", game: game)

        // A classic request (an older version of the game, no queue) waits in the queue and is matched by its rules
        // with a request that names the queue; the rules saw it without properties.
        let oldFinds = Task { try await old.matchmaker.findMatch(for: GKMatchRequest(minPlayers: 2, maxPlayers: 2)) }
        try await waitUntil("the classic request waits in the queue") { try await new.matchmaker.queryQueueActivity(queue) == 1 }
        let newMatch = try await new.matchmaker.findMatch(for: Self.request(queue, ["skill": 5]))
        let oldMatch = try await oldFinds.value
        #expect(oldMatch.matchID == newMatch.matchID)
        #expect(newMatch.playerProperties == [old.localPlayer.playerID: ["gc": [:]]])
        #expect(oldMatch.playerProperties == [new.localPlayer.playerID: ["skill": 5, "gc": [:]]])

        // A classic request whose sizes never meet the queue's rule set (three players, pairs only) stays classic.
        let wideFinds = Task { try await wide.matchmaker.findMatch(for: GKMatchRequest(minPlayers: 3, maxPlayers: 3)) }
        try await MatchmakingLiveTests.sent(wide, "the server has the three-player request")
        #expect(try await new.matchmaker.queryQueueActivity(queue) == 2, "only the first two requests entered the queue")
        wide.matchmaker.cancel()
        _ = await wideFinds.result
        for match in [oldMatch, newMatch] { match.disconnect() }
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func hostedPlayersOfTheTeamsQueueGetBalancedTeams(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        var devices: [(device: GKGameCenter, skill: Int)] = []
        for (index, skill) in [1, 2, 3, 4].enumerated() {
            devices.append((try await Devices.signedUp(server, alias: "Team\(index)").0, skill))
        }
        let found = devices.map { device, skill in
            Task { try await device.matchmaker.findMatchedPlayers(Self.request("com.example.tapper.Teams", ["skill": .number(Double(skill))], min: 4, max: 4)) }
        }
        var teams: [String: String] = [:]
        var skillOfTeam: [String: Double] = [:]
        for (index, task) in found.enumerated() {
            let players = try await task.value
            #expect(players.playerIDs.count == 4)
            #expect(players.playerProperties?.count == 3)
            guard case .object(let gc)? = players.properties?["gc"], case .string(let team)? = gc["team"] else {
                Issue.record("player \(index) has no team: \(String(describing: players.properties))")
                continue
            }
            teams[devices[index].device.localPlayer.playerID] = team
            skillOfTeam[team, default: 0] += Double(devices[index].skill)
            // Every device sees the same assignment.
            for (other, properties) in players.playerProperties ?? [:] {
                if let known = teams[other], case .object(let gc)? = properties["gc"] { #expect(gc["team"] == .string(known)) }
            }
        }
        #expect(Set(teams.values) == ["blue", "red"] && teams.values.filter { $0 == "blue" }.count == 2)
        #expect(abs((skillOfTeam["blue"] ?? 0) - (skillOfTeam["red"] ?? 0)) <= 2)
        try await server.stop()
    }
}
