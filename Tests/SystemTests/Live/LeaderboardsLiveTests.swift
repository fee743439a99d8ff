import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkFaultProxy
import OpenGameKit
import Testing

/// Leaderboards through the SDK against real server processes, on every engine (game `com.example.tapper`:
/// `tapper.taps` default descending with a " tap"/" taps" suffix, `tapper.sprint` ascending, aggregate
/// `tapper.anymap` of `tapper.map1` and `tapper.map2`).
@Suite(.serialized, .timeLimit(.minutes(3))) struct LeaderboardsLiveTests {
    static let adminKey = "live-admin-key-0123456789"

    static func report(_ device: GKGameCenter, _ value: Int64, _ category: String? = nil) async throws {
        let score = GKScore(category: category, in: device)
        score.value = value
        try await score.report()
    }

    static func load(
        _ device: GKGameCenter, _ category: String? = nil, scope: GKLeaderboard.PlayerScope = .global,
        time: GKLeaderboard.TimeScope = .allTime, range: ClosedRange<Int> = 1...25
    ) async throws -> (scores: [GKScore], board: GKLeaderboard) {
        let board = GKLeaderboard(in: device)
        board.category = category
        board.playerScope = scope
        board.timeScope = time
        board.range = range
        return (try await board.loadScores(), board)
    }

    /// Moves the server's clock (servers started with `--test-clock`).
    static func advanceClock(_ server: LiveServer, hours: Double) async throws {
        var request = URLRequest(url: server.url.appendingPathComponent("admin/v1/clock"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(adminKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"seconds": \#(hours * 3600)}"#.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }

    @Test(arguments: LiveServer.engines)
    func manyDevicesAreRankedBestFirstWithTiesByEarlierReport(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        var devices: [(device: GKGameCenter, value: Int64)] = []
        for (index, value) in [Int64(30), 1, 50, 30, 7, 50].enumerated() {
            let (device, _) = try await Devices.signedUp(server, alias: "Rank\(index)")
            try await Self.report(device, value)
            devices.append((device, value))
        }
        // A better score later replaces a player's entry; a worse one does not.
        try await Self.report(devices[1].device, 60)
        try await Self.report(devices[0].device, 2)

        let (scores, board) = try await Self.load(devices[4].device, range: 1...4)
        let id = { (index: Int) in devices[index].device.localPlayer.playerID }
        #expect(scores.map(\.playerID) == [id(1), id(2), id(5), id(0)])
        #expect(scores.map(\.value) == [60, 50, 50, 30])
        #expect(scores.map(\.rank) == [1, 2, 3, 4])
        #expect(scores.map(\.category) == ["tapper.taps", "tapper.taps", "tapper.taps", "tapper.taps"])
        #expect(scores.first?.formattedValue == "60 taps")
        #expect(board.maxRange == 6)
        #expect(board.title == "Most taps")
        #expect(board.localPlayerScore?.rank == 6)
        #expect(board.localPlayerScore?.value == 7)

        // Named players are ranked among themselves.
        let named = GKLeaderboard(playerIDs: [id(4), id(3)], in: devices[0].device)
        #expect(try await named.loadScores().map(\.rank) == [1, 2])
        #expect(named.localPlayerScore == nil && named.maxRange == 2)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func friendsAndAggregatesRankTheRightPlayers(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (alice, _) = try await Devices.signedUp(server, alias: "Alice")
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        let (carol, _) = try await Devices.signedUp(server, alias: "Carol")
        try await GKFriendRequest.send(to: [bob.localPlayer.playerID], message: nil, in: alice)
        let request = try #require(try await GKFriendRequest.loadPending(in: bob).first)
        try await request.accept()

        for (device, map1, map2) in [(alice, Int64(10), Int64(45)), (bob, 30, 5), (carol, 80, 90)] {
            let first = GKScore(category: "tapper.map1", in: device), second = GKScore(category: "tapper.map2", in: device)
            first.value = map1
            second.value = map2
            try await GKScore.report([first, second])
        }
        let (friends, friendsBoard) = try await Self.load(alice, "tapper.map1", scope: .friendsOnly)
        #expect(friends.map(\.playerID) == [bob.localPlayer.playerID, alice.localPlayer.playerID])
        #expect(friends.map(\.rank) == [1, 2])
        #expect(friendsBoard.localPlayerScore?.rank == 2 && friendsBoard.maxRange == 2)

        let (any, anyBoard) = try await Self.load(alice, "tapper.anymap")
        #expect(any.map(\.value) == [90, 45, 30])
        #expect(any.map(\.category) == ["tapper.map2", "tapper.map2", "tapper.map1"])
        #expect(anyBoard.title == "Any map" && anyBoard.localPlayerScore?.rank == 2)
        let (anyFriends, _) = try await Self.load(bob, "tapper.anymap", scope: .friendsOnly)
        #expect(anyFriends.map(\.playerID) == [alice.localPlayer.playerID, bob.localPlayer.playerID])
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aRestartKeepsEveryScoreAndRebuildsIdenticalRanks(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start(extraArguments: ["--admin-key", Self.adminKey, "--test-clock"])
        var devices: [GKGameCenter] = []
        for index in 0..<8 {
            let (device, _) = try await Devices.signedUp(server, alias: "Keep\(index)")
            devices.append(device)
            let values: [Int64] = [Int64(index * 7 % 5), Int64(index * 3 % 4)]
            for value in values { try await Self.report(device, value) }
            let map = GKScore(category: index.isMultiple(of: 2) ? "tapper.map1" : "tapper.map2", in: device)
            map.value = Int64(100 - index * 3)
            let sprint = GKScore(category: "tapper.sprint", in: device)
            sprint.value = Int64(900 + index % 3)
            try await GKScore.report([map, sprint])
            if index == 3 { try await Self.advanceClock(server, hours: 30) }
        }
        func snapshot() async throws -> [String] {
            var lines: [String] = []
            for category in ["tapper.taps", "tapper.sprint", "tapper.anymap"] {
                for time in [GKLeaderboard.TimeScope.allTime, .today, .week] {
                    let (scores, board) = try await Self.load(devices[0], category, time: time, range: 1...100)
                    lines.append("\(category) \(time) max=\(board.maxRange) local=\(board.localPlayerScore?.rank ?? 0)")
                    lines += scores.map { "\($0.rank) \($0.playerID) \($0.value) \($0.category ?? "") \($0.date.timeIntervalSince1970)" }
                }
            }
            return lines
        }
        let before = try await snapshot()
        #expect(before.count > 9 * 5)
        try await server.stop()
        try await server.start(extraArguments: ["--admin-key", Self.adminKey, "--test-clock"])
        try await Self.advanceClock(server, hours: 30)  // the clock starts from the system's again
        let after = try await snapshot()
        #expect(after == before)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aScoreReportedWhileTheServerIsDownArrivesExactlyOnce(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let device = Devices.make(server, storage: storage)
        let account = "sco-\(UUID().uuidString.prefix(8))"
        try await device.localPlayer.authenticate(.signUp(account: account, password: "password-1", alias: "Offline"))
        try await Self.report(device, 5)
        let (loaded, _) = try await Self.load(device)
        #expect(loaded.map(\.value) == [5])
        try await server.stop()

        // The load falls back to the last good page of the same query.
        let board = GKLeaderboard(in: device)
        let loadError = await #expect(throws: GKError.self) { try await board.loadScores() }
        #expect(loadError?.code == .communicationsFailure)
        #expect(loadError?.partialResult(as: [GKScore].self)?.map(\.value) == [5])
        #expect(board.localPlayerScore?.value == 5)

        let score = GKScore(in: device)
        score.value = 99
        score.context = 42
        let error = await #expect(throws: GKError.self) { try await score.report() }
        #expect(error?.code == .communicationsFailure)
        #expect(error?.queued == true)
        await device.close()

        try await server.start()
        let restarted = Devices.make(server, storage: storage)
        try await restarted.localPlayer.authenticate(.stored)
        try await waitUntil("the outbox is empty", within: .seconds(15)) {
            ((try? FileManager.default.contentsOfDirectory(atPath: storage.appendingPathComponent("outbox").path)) ?? []).isEmpty
        }
        let (scores, after) = try await Self.load(restarted)
        #expect(scores.map(\.value) == [99])
        #expect(scores.first?.context == 42)
        #expect(after.maxRange == 1)
        try await server.stop()
    }

    /// The seed: a score's date is set when the object is made, and a game may archive a score that failed to report
    /// and send it later. Such a score, and one that waited in the outbox, count in the windows of when they were
    /// earned.
    @Test(arguments: LiveServer.engines)
    func aScoreThatWaitedKeepsTheDateItWasEarned(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let device = Devices.make(server, storage: storage)
        try await device.localPlayer.authenticate(.signUp(account: "dat-\(UUID().uuidString.prefix(8))", password: "password-1", alias: "Dated"))
        let (rival, _) = try await Devices.signedUp(server, alias: "Rival")
        try await Self.report(rival, 70)

        // Archived 25 hours ago, reported now.
        let archived = GKScore(in: device)
        archived.value = 100
        var fields = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(archived)) as? [String: Any])
        let earned = Date().addingTimeInterval(-25 * 3600)
        fields["date"] = earned.timeIntervalSinceReferenceDate
        let decoder = JSONDecoder()
        decoder.userInfo[GKGameCenter.codingUserInfoKey] = device
        let restored = try decoder.decode(GKScore.self, from: JSONSerialization.data(withJSONObject: fields))
        try await restored.report()
        #expect(abs(restored.date.timeIntervalSince(earned)) < 2)
        #expect(try await Self.load(device, time: .today).scores.map(\.value) == [70])
        #expect(try await Self.load(device, time: .week).scores.map(\.value) == [100, 70])

        // Made while the server is down; delivered from the outbox after a restart, two seconds later.
        try await server.stop()
        let offline = GKScore(in: device)
        offline.value = 90
        let error = await #expect(throws: GKError.self) { try await offline.report() }
        #expect(error?.queued == true)
        await device.close()
        try await Task.sleep(for: .seconds(2))
        let restartedAt = Date()
        try await server.start()
        let restarted = Devices.make(server, storage: storage)
        try await restarted.localPlayer.authenticate(.stored)
        try await waitUntil("the outbox is empty", within: .seconds(15)) {
            ((try? FileManager.default.contentsOfDirectory(atPath: storage.appendingPathComponent("outbox").path)) ?? []).isEmpty
        }
        let today = try await Self.load(restarted, time: .today).scores
        #expect(today.map(\.value) == [90, 70])
        // Dated when it was made, not when it was delivered: the time the request took on a loaded machine may move
        // the date a little later, never past the restart.
        let delivered = try #require(today.first).date
        #expect(delivered > offline.date.addingTimeInterval(-1) && delivered < restartedAt)
        await restarted.close()
        await rival.close()
        try await server.stop()
    }

    /// The outbox keeps a report for 30 days at most: an older one is dropped, not sent, and the game is told.
    @Test func aReportHeldLongerThanTheOutboxKeepsOneIsDropped() async throws {
        /// The outbox's file format.
        struct Entry: Codable {
            var id: String
            var playerID: String
            var path: String
            var body: Data
            var createdAt: Date
        }
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let device = Devices.make(server, storage: storage)
        try await device.localPlayer.authenticate(.signUp(account: "old-\(UUID().uuidString.prefix(8))", password: "password-1", alias: "Old"))
        let playerID = device.localPlayer.playerID
        await device.close()
        let outbox = storage.appendingPathComponent("outbox")
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        for (value, age) in [(7, 3600.0), (8, 31 * 86_400.0)] {
            let id = UUID().uuidString
            let body = Data(#"{"reportID": "\#(id)", "scores": [{"value": \#(value), "context": 0}]}"#.utf8)
            let entry = Entry(id: id, playerID: playerID, path: "/v1/scores", body: body, createdAt: Date().addingTimeInterval(-age))
            try JSONEncoder().encode(entry).write(to: outbox.appendingPathComponent("\(id).json"))
        }
        let restarted = Devices.make(server, storage: storage)
        let events = restarted.events
        try await restarted.localPlayer.authenticate(.stored)
        let dropped = try await nextEvent(events) { event -> GKError? in
            if case .reportRefused(_, let error) = event { return error }
            return nil
        }
        #expect(dropped.code == .communicationsFailure && dropped.message.contains("30 days"))
        try await waitUntil("the outbox is empty", within: .seconds(15)) {
            ((try? FileManager.default.contentsOfDirectory(atPath: outbox.path)) ?? []).isEmpty
        }
        #expect(try await Self.load(restarted).scores.map(\.value) == [7])
        await restarted.close()
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func dailyAndWeeklyBoardsFollowTheServersClock(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start(extraArguments: ["--admin-key", Self.adminKey, "--test-clock"])
        let (device, _) = try await Devices.signedUp(server, alias: "Window")
        try await Self.report(device, 100)
        try await Self.advanceClock(server, hours: 20)
        try await Self.report(device, 40)
        try await Self.advanceClock(server, hours: 5)
        #expect(try await Self.load(device, time: .today).scores.map(\.value) == [40])
        #expect(try await Self.load(device, time: .week).scores.map(\.value) == [100])
        #expect(try await Self.load(device, time: .allTime).scores.map(\.value) == [100])
        try await Self.advanceClock(server, hours: 24 * 7)
        #expect(try await Self.load(device, time: .week).board.maxRange == 0)
        #expect(try await Self.load(device, time: .allTime).scores.map(\.value) == [100])
        try await server.stop()
    }

    @Test func badInputGetsAClearErrorAndNothingIsStored() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Bad")

        let zero = GKLeaderboard(in: device)
        zero.range = 0...10
        #expect(await #expect(throws: GKError.self) { try await zero.loadScores() }?.code == .invalidParameter)
        let wide = GKLeaderboard(in: device)
        wide.range = 1...101
        #expect(await #expect(throws: GKError.self) { try await wide.loadScores() }?.code == .invalidParameter)

        let unknown = GKScore(category: "tapper.nope", in: device)
        let unknownError = await #expect(throws: GKError.self) { try await unknown.report() }
        #expect(unknownError?.code == .invalidParameter)
        #expect(unknownError?.message.contains("tapper.nope") == true)
        #expect(unknownError?.queued == false)
        let aggregate = GKScore(category: "tapper.anymap", in: device)
        #expect(await #expect(throws: GKError.self) { try await aggregate.report() }?.code == .invalidParameter)
        let unknownBoard = GKLeaderboard(in: device)
        unknownBoard.category = "tapper.nope"
        #expect(await #expect(throws: GKError.self) { try await unknownBoard.loadScores() }?.code == .invalidParameter)

        // A score archived by another player cannot be reported by this one.
        let (other, _) = try await Devices.signedUp(server, alias: "Other")
        let foreign = GKScore(in: other)
        foreign.value = 1_000
        let decoder = JSONDecoder()
        decoder.userInfo[GKGameCenter.codingUserInfoKey] = device
        let moved = try decoder.decode(GKScore.self, from: JSONEncoder().encode(foreign))
        #expect(await #expect(throws: GKError.self) { try await moved.report() }?.code == .invalidPlayer)

        await device.localPlayer.signOut()
        let signedOut = GKScore(in: device)
        #expect(await #expect(throws: GKError.self) { try await signedOut.report() }?.code == .notAuthenticated)
        #expect(await #expect(throws: GKError.self) { try await GKLeaderboard(in: device).loadScores() }?.code == .notAuthenticated)

        let (scores, board) = try await Self.load(other)
        #expect(scores.isEmpty && board.maxRange == 0)
        try await server.stop()
    }

    /// Stops the server's clock at `date` (servers started with `--test-clock`).
    static func freezeClock(_ server: LiveServer, at date: Date) async throws {
        var request = URLRequest(url: server.url.appendingPathComponent("admin/v1/clock"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(adminKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"seconds": 0, "freezeAt": \#(date.timeIntervalSince1970)}"#.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }

    /// `tapper.daily` starts again at each New York midnight: two devices score on either side of one, a millisecond
    /// apart, and the SDK reads today's board, the previous occurrence and the lifetime bests.
    @Test(arguments: LiveServer.engines)
    func aRecurringBoardStartsAgainAtEachOccurrence(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start(extraArguments: ["--admin-key", Self.adminKey, "--test-clock"])
        let (ann, _) = try await Devices.signedUp(server, alias: "Ann")
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        let listed = try #require(try await GKLeaderboard.loadLeaderboards(IDs: ["tapper.daily"], in: ann).first)
        #expect(listed.type == .recurring && listed.leaderboardDescription?.contains("New York") == true)
        let running = try #require(listed.startDate)
        #expect([23, 24, 25].map { Double($0 * 3600) }.contains(listed.duration))
        #expect(listed.nextStartDate == running.addingTimeInterval(listed.duration))
        #expect(try await GKLeaderboard.loadLeaderboards(IDs: ["tapper.taps"], in: ann).first?.type == .classic)
        // Sets mix classic and recurring boards, in the set's order.
        let sets = try await GKLeaderboardSet.loadLeaderboardSets(in: ann)
        #expect(sets.map(\.identifier) == ["tapper.maps", "tapper.speed"] && sets[1].title == "Speed")
        let speed = try await sets[1].loadLeaderboards()
        #expect(speed.map(\.category) == ["tapper.daily", "tapper.taps", "tapper.sprint"])
        #expect(speed.map(\.type) == [.recurring, .classic, .classic])

        // A millisecond before the next midnight, and then midnight itself.
        let boundary = try #require(listed.nextStartDate)
        try await Self.freezeClock(server, at: boundary.addingTimeInterval(-0.001))
        try await Self.report(ann, 70, "tapper.daily")
        try await Self.report(bob, 20, "tapper.daily")
        try await Self.freezeClock(server, at: boundary)
        try await Self.report(bob, 30, "tapper.daily")

        let today = GKLeaderboard(in: bob)
        today.category = "tapper.daily"
        #expect(try await today.loadScores().map(\.value) == [30])
        #expect(today.type == .recurring && today.startDate == boundary && today.localPlayerScore?.rank == 1)
        let yesterday = try await today.loadPreviousOccurrence()
        #expect(yesterday.nextStartDate == boundary && yesterday.startDate! < boundary)
        #expect(try await yesterday.loadScores().map(\.value) == [70, 20])
        #expect(yesterday.localPlayerScore?.rank == 2)
        let lifetime = GKLeaderboard(in: ann)
        lifetime.category = "tapper.daily"
        lifetime.ranksLifetimeBests = true
        #expect(try await lifetime.loadScores().map(\.value) == [70, 30])
        try await server.stop()
    }

    @Test func categoriesAndTitlesFollowTheDevicesLocale() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let device = GKGameCenter(
            server: server.url, bundleID: "com.example.tapper",
            storageDirectory:
                FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)"), locale: "ja-JP")
        try await device.localPlayer.authenticate(.signUp(account: "ja-\(UUID().uuidString.prefix(8))", password: "password-1", alias: "Ja"))
        let (categories, titles) = try await GKLeaderboard.loadCategories(in: device)
        #expect(categories == ["tapper.taps", "tapper.sprint", "tapper.map1", "tapper.map2", "tapper.daily", "tapper.anymap"])
        #expect(titles.first == "最多タップ")
        #expect(titles.last == "Any map")
        try await server.stop()
    }

    @Test func scoresArchiveAndRestore() throws {
        let device = GKGameCenter(
            server: URL(string: "http://127.0.0.1:1")!, bundleID: "com.example.tapper",
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("arch-\(UUID().uuidString)"))
        let score = GKScore(category: "tapper.sprint", in: device)
        score.value = Int64.min
        score.context = UInt64.max
        let decoder = JSONDecoder()
        decoder.userInfo[GKGameCenter.codingUserInfoKey] = device
        let restored = try decoder.decode(GKScore.self, from: JSONEncoder().encode(score))
        #expect(restored.category == "tapper.sprint")
        #expect(restored.value == Int64.min)
        #expect(restored.context == UInt64.max)
        #expect(restored.date == score.date)
        #expect(restored.playerID == "")
    }
}
