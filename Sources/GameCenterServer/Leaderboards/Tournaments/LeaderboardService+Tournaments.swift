import Foundation
import GameCenterProtocol
import GameCenterStorage

/// Tournaments: recurring boards with entry rules (the manifest's `recurring.tournament`). A player joins an
/// occurrence (or, unless `joinRequired`, their first score joins it) while fewer than `maxSize` have; each score
/// they report to it uses an attempt, and beyond the board's `attempts` (and any an admin granted) it is refused.
/// The entry, the attempts and the score are one transaction: a report refused for its attempts stores nothing.
extension LeaderboardService {
    /// The tournament rules of a leaderboard, nil when it is not a tournament.
    static func tournament(_ category: String, in game: Game) -> LeaderboardDefinition.TournamentRules? {
        game.leaderboards.first { $0.category == category }?.recurrence?.tournament
    }

    /// Stores a report with scores on tournament boards in one transaction with their entries and attempts. Answers
    /// the stored records (none for a report applied before) and, per tournament category, the attempts left (nil: no
    /// limit).
    func reportToTournaments(
        _ reportID: String, _ scores: [NewScore], game: Game, environment: String, playerID: String, now: Int64
    ) async throws -> ([ScoreRecord], [String: Int?]) {
        let counts = Dictionary(grouping: scores.filter { Self.tournament($0.category, in: game) != nil }, by: \.category)
        return try await database.write { storage in
            guard
                let records = try await storage.reportScores(
                    reportID: reportID, scores, bundleID: game.bundleID, environment: environment, playerID: playerID, now: now)
            else { return ([], [:]) }
            var attemptsLeft: [String: Int?] = [:]
            for (category, reported) in counts.sorted(by: { $0.key < $1.key }) {
                guard let rules = Self.tournament(category, in: game), let occurrence = reported.first?.occurrence else { continue }
                let board = TournamentOccurrence(bundleID: game.bundleID, environment: environment, category: category, occurrence: occurrence)
                if try await storage.tournamentEntry(board, playerID: playerID) == nil {
                    guard !rules.joinRequired else { throw APIError.notJoined(category) }
                    guard try await storage.joinTournament(board, playerID: playerID, maxSize: rules.maxSize, now: now) != nil else {
                        throw APIError.tournamentFull(category, maxSize: rules.maxSize ?? 0)
                    }
                }
                // After the join, which locks the occurrence's row for writing: a shared lock taken first and then
                // raised by two reports at once would deadlock on PostgreSQL.
                guard try await storage.tournamentClosedAt(board) == nil else { throw APIError.tournamentEnded(category) }
                guard let entry = try await storage.useTournamentAttempts(board, playerID: playerID, count: reported.count, attempts: rules.attempts)
                else {
                    let entry = try await storage.tournamentEntry(board, playerID: playerID)
                    throw APIError.noAttemptsLeft(
                        category, allowed: (rules.attempts ?? 0) + Int(entry?.extraAttempts ?? 0), used: Int(entry?.attemptsUsed ?? 0),
                        asked: reported.count)
                }
                attemptsLeft[category] = rules.attempts.map { $0 + Int(entry.extraAttempts) - Int(entry.attemptsUsed) }
            }
            return (records, attemptsLeft)
        }
    }

    /// Joins the signed-in player to the running occurrence of a tournament board (again: answers their entry).
    func joinTournament(_ category: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> TournamentEntry {
        let game = device.game
        let (rules, recurrence, occurrence, board) = try runningTournament(category, game: game, environment: device.environment)
        let now = clock.nowMillis()
        let entry = try await database.write { storage in
            // An ended occurrence says so before it says it is full.
            guard try await storage.tournamentClosedAt(board, locking: false) == nil else { throw APIError.tournamentEnded(category) }
            guard let entry = try await storage.joinTournament(board, playerID: session.playerID, maxSize: rules.maxSize, now: now) else {
                throw APIError.tournamentFull(category, maxSize: rules.maxSize ?? 0)
            }
            // Checked after the join (see reportToTournaments); an ended occurrence takes the join back.
            guard try await storage.tournamentClosedAt(board) == nil else { throw APIError.tournamentEnded(category) }
            return (entry, try await storage.tournamentEntrants(board))
        }
        return tournamentEntry(category, entry.0, entrants: entry.1, rules: rules, recurrence: recurrence, occurrence: occurrence, game: game, now: now)
    }

    /// The signed-in player's entry in the running occurrence of a tournament board.
    func tournamentEntry(_ category: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> TournamentEntry {
        let game = device.game
        let (rules, recurrence, occurrence, board) = try runningTournament(category, game: game, environment: device.environment)
        let (entry, entrants) = try await database.read { storage in
            (try await storage.tournamentEntry(board, playerID: session.playerID), try await storage.tournamentEntrants(board))
        }
        guard let entry else { throw APIError.notJoined(category) }
        return tournamentEntry(
            category, entry, entrants: entrants, rules: rules, recurrence: recurrence, occurrence: occurrence, game: game, now: clock.nowMillis())
    }

    /// Grants a joined player attempts beyond the board's in the running occurrence (admin).
    func grantAttempts(game: Game, environment: Environment, category: String, playerID: String, extra: Int) async throws -> TournamentEntry {
        guard (1...1000).contains(extra) else { throw APIError.invalidParameter("extra is 1 to 1000 attempts; got \(extra)") }
        let (rules, recurrence, occurrence, board) = try runningTournament(category, game: game, environment: environment)
        let (entry, entrants) = try await database.write { storage in
            (try await storage.grantTournamentAttempts(board, playerID: playerID, extra: extra), try await storage.tournamentEntrants(board))
        }
        guard let entry else { throw APIError.notJoined(category) }
        return tournamentEntry(
            category, entry, entrants: entrants, rules: rules, recurrence: recurrence, occurrence: occurrence, game: game, now: clock.nowMillis())
    }

    /// Ends the running occurrence of a tournament board now (admin): it takes no more entrants or scores, and its end
    /// is recorded at once with the standings (the clock finds it recorded at the scheduled end).
    func endTournament(game: Game, environment: Environment, category: String) async throws -> LeaderboardOccurrenceEvent {
        let (_, _, occurrence, board) = try runningTournament(category, game: game, environment: environment)
        let now = clock.nowMillis()
        guard try await database.write({ try await $0.closeTournament(board, now: now) }) else { throw APIError.tournamentEnded(category) }
        let standings = try await adminPage(
            game: game, environment: environment, category: category, timeScope: .allTime, rangeStart: 1,
            rangeLength: LeaderboardOccurrenceEvent.standingsLength, locale: game.defaultLocale, occurrence: StoredTime.date(occurrence.start)
        ).entries
        let event = NewOccurrenceEvent(
            bundleID: game.bundleID, environment: environment.rawValue, category: category, occurrence: occurrence.start, occurrenceEnd: now,
            kind: LeaderboardOccurrenceEventKind.ended.rawValue, recordedAt: now,
            standings: String(decoding: try WireCoding.makeEncoder().encode(standings), as: UTF8.self))
        let eventID = try await database.write { try await $0.recordOccurrenceEvent(event) } ?? 0
        return LeaderboardOccurrenceEvent(
            eventID: eventID, category: category, environment: environment, kind: .ended, start: StoredTime.date(occurrence.start),
            end: StoredTime.date(now), recordedAt: StoredTime.date(now), standings: standings)
    }

    /// Starts the next occurrence of a tournament board now, before its scheduled start (admin): from now on scores and
    /// entrants count in it (on other nodes within a second). Only while no occurrence takes scores: none runs, or the
    /// running one was ended early. Its start is recorded at once (the clock finds it recorded at the scheduled start).
    func startTournament(game: Game, environment: Environment, category: String) async throws -> LeaderboardOccurrenceEvent {
        let (_, recurrence) = try tournamentRules(category, game: game)
        let now = clock.nowMillis()
        let board = { @Sendable (occurrence: OccurrenceSchedule.Occurrence) in
            TournamentOccurrence(bundleID: game.bundleID, environment: environment.rawValue, category: category, occurrence: occurrence.start)
        }
        if let running = index.occurrences.receiving(recurrence, category: category, bundleID: game.bundleID, environment: environment.rawValue, at: now),
            try await database.read({ try await $0.tournamentClosedAt(board(running), locking: false) }) == nil
        {
            throw APIError.tournamentRunning(category)
        }
        guard let next = recurrence.schedule.first(startingAfter: now) else { throw APIError.noOccurrence(category, next: nil) }
        let event = NewOccurrenceEvent(
            bundleID: game.bundleID, environment: environment.rawValue, category: category, occurrence: next.start, occurrenceEnd: next.end,
            kind: LeaderboardOccurrenceEventKind.started.rawValue, recordedAt: now, standings: "[]")
        let eventID = try await database.write { storage -> Int64? in
            guard try await storage.openTournament(board(next), now: now) else { throw APIError.tournamentRunning(category) }
            return try await storage.recordOccurrenceEvent(event)
        }
        index.occurrences.noteStartedEarly(bundleID: game.bundleID, environment: environment.rawValue, category: category, start: next.start, openedAt: now)
        return LeaderboardOccurrenceEvent(
            eventID: eventID ?? 0, category: category, environment: environment, kind: .started, start: StoredTime.date(next.start),
            end: StoredTime.date(next.end), recordedAt: StoredTime.date(now), standings: [])
    }

    private func tournamentRules(_ category: String, game: Game) throws -> (LeaderboardDefinition.TournamentRules, LeaderboardDefinition.Recurrence) {
        guard let definition = game.leaderboards.first(where: { $0.category == category }) else {
            throw APIError.unknownCategory(category, game: game)
        }
        guard let recurrence = definition.recurrence, let rules = recurrence.tournament else { throw APIError.notATournament(category) }
        return (rules, recurrence)
    }

    private func runningTournament(_ category: String, game: Game, environment: Environment) throws -> (
        LeaderboardDefinition.TournamentRules, LeaderboardDefinition.Recurrence, OccurrenceSchedule.Occurrence, TournamentOccurrence
    ) {
        let (rules, recurrence) = try tournamentRules(category, game: game)
        let now = clock.nowMillis()
        guard
            let occurrence = index.occurrences.receiving(
                recurrence, category: category, bundleID: game.bundleID, environment: environment.rawValue, at: now)
        else {
            throw APIError.noOccurrence(
                category,
                next: recurrence.schedule.first(startingAfter: now).map { OccurrenceTracker.localTime($0.start, in: recurrence.schedule.timeZone) })
        }
        return (
            rules, recurrence, occurrence,
            TournamentOccurrence(bundleID: game.bundleID, environment: environment.rawValue, category: category, occurrence: occurrence.start)
        )
    }

    private func tournamentEntry(
        _ category: String, _ entry: TournamentEntryRecord, entrants: Int64, rules: LeaderboardDefinition.TournamentRules,
        recurrence: LeaderboardDefinition.Recurrence, occurrence: OccurrenceSchedule.Occurrence, game: Game, now: Int64
    ) -> TournamentEntry {
        let keptFrom = index.occurrences.keptFrom(recurrence, category: category, bundleID: game.bundleID, at: now)
        return TournamentEntry(
            category: category,
            occurrence: index.occurrences.describe(occurrence, of: recurrence, keptFrom: keptFrom, now: now, startedEarly: occurrence.start > now),
            attemptsUsed: Int(entry.attemptsUsed), attemptsLeft: rules.attempts.map { $0 + Int(entry.extraAttempts) - Int(entry.attemptsUsed) },
            entrants: Int(entrants), maxSize: rules.maxSize, joinedAt: StoredTime.date(entry.joinedAt))
    }
}

extension APIError {
    static func notATournament(_ category: String) -> APIError {
        APIError(.leaderboardNotATournament, "'\(category)' is not a tournament: its manifest sets no recurring.tournament rules")
    }
    static func notJoined(_ category: String) -> APIError {
        APIError(
            .leaderboardNotJoined, "join '\(category)' first (POST /v1/leaderboards/\(category)/entry): this tournament takes scores from its entrants only")
    }
    static func tournamentFull(_ category: String, maxSize: Int) -> APIError {
        APIError(.leaderboardTournamentFull, "this occurrence of '\(category)' is full: it takes the first \(maxSize) players who join")
    }
    static func tournamentRunning(_ category: String) -> APIError {
        APIError(
            .leaderboardTournamentRunning,
            "an occurrence of '\(category)' takes scores now, or the next one was started already; end the running one first (…/end) to start the next now")
    }
    static func tournamentEnded(_ category: String) -> APIError {
        APIError(.leaderboardTournamentEnded, "this occurrence of '\(category)' was ended early: it takes no more players or scores")
    }
    static func noAttemptsLeft(_ category: String, allowed: Int, used: Int, asked: Int) -> APIError {
        APIError(
            .leaderboardNoAttemptsLeft,
            "this occurrence of '\(category)' allows you \(allowed) scores; you reported \(used), so \(asked) more would be too many")
    }
}
