import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Logging
import NIOCore

/// The leaderboard rules of the seed: scores reported to a game's leaderboards (never to an aggregate, always for
/// the signed-in player), every report kept with its date, each player's best ranked per leaderboard and rolling
/// window, pages by rank for everyone, for friends or for named players, with values formatted for the device.
///
/// Ranking: a better value ranks first; equal values rank by the report stored first
/// (the smaller score id), whenever each was earned. A player appears once
/// per board with their best score; on an aggregate, with their best score on any member.
struct LeaderboardService: Sendable {
    let database: Database
    let index: LeaderboardIndex
    let clock: ServerClock
    let formatter: ScoreFormatter
    let metrics: ServerMetrics
    let limiter: RateLimiter
    /// Tells the other nodes of stored reports, so that their boards follow (``ScoreFollower``).
    let bus: any EventBus
    /// Tells the players of challenges about the scores that count in them.
    let challenges: ChallengeService
    /// The studio's decisions on quarantined scores.
    let audit: AuditLog
    /// Asks the studio's verifier about scores on boards with `verification`.
    let verifier = ScoreVerifier()
    /// Sessions' keys for signed reports.
    let reportKeys = ReportKeys()

    /// The game's leaderboards but hidden ones, titles and descriptions in the device's locale, recurring ones with
    /// their current occurrence.
    func list(device: DeviceIdentity) -> LeaderboardList {
        let game = device.game
        let now = clock.nowMillis()
        let text = { (text: LocalizedText) in Localization.text(text, locale: device.locale, fallback: game.defaultLocale) }
        return LeaderboardList(
            leaderboards:
                game.leaderboards.filter { !$0.isHidden }.map { definition in
                    LeaderboardInfo(
                        category: definition.category, title: text(definition.title), isDefault: definition.isDefault, members: [],
                        kind: definition.recurrence == nil ? .classic : .recurring, description: definition.description.map(text),
                        occurrence: definition.recurrence.flatMap {
                            currentOccurrence($0, category: definition.category, game: game, environment: device.environment, now: now)?.info
                        },
                        lifetimeBest: definition.recurrence?.lifetimeBest)
                }
                + game.aggregates.map {
                    LeaderboardInfo(category: $0.category, title: text($0.title), isDefault: $0.isDefault, members: $0.members, kind: .classic)
                })
    }

    /// The game's leaderboard sets, titles in the device's locale, hidden boards left out.
    func sets(device: DeviceIdentity) -> LeaderboardSetList {
        let game = device.game
        let hidden = Set(game.leaderboards.filter(\.isHidden).map(\.category))
        return LeaderboardSetList(
            sets: game.leaderboardSets.map { set in
                LeaderboardSetInfo(
                    identifier: set.identifier, title: Localization.text(set.title, locale: device.locale, fallback: game.defaultLocale),
                    groupIdentifier: set.groupIdentifier, leaderboards: set.leaderboards.filter { !hidden.contains($0) })
            })
    }

    /// Stores a batch of the signed-in player's scores (all or none), dated when they were earned (``ScoreDating``;
    /// `deviceTime` is the device's clock header), and ranks them. A batch whose `reportID` was applied before
    /// changes nothing and answers an empty list. Scores on boards with `verification` go to the studio's verifier
    /// (each answered with its state); a batch with a score on a `signed` board must carry a valid signature of `body`.
    func report(
        _ batch: ScoreReportBatch, body: ByteBuffer, headers: HTTPFields, device: DeviceIdentity, session: AuthenticatedSession
    ) async throws -> ScoreReportResult {
        let game = device.game
        let now = clock.nowMillis()
        let dating = try ScoreDating(now: now, deviceTime: headers[.deviceTime])
        try Self.validateReportID(batch.reportID)
        guard (1...Limits.maximumScoresPerReport).contains(batch.scores.count) else {
            throw APIError.invalidParameter("a report holds 1 to \(Limits.maximumScoresPerReport) scores; this one holds \(batch.scores.count)")
        }
        var attached = 0
        let scores = try batch.scores.map { score in
            if let playerID = score.playerID, playerID != session.playerID { throw APIError.scoreForAnotherPlayer(playerID) }
            let new = try Self.newScore(score, game: game, environment: device.environment.rawValue, dating: dating, occurrences: index.occurrences)
            let definition = try Self.reportable(new.category, in: game)
            if definition.writePolicy == .serverOnly { throw APIError.serverOnlyLeaderboard(new.category) }
            if let details = score.details, details.count > Limits.maximumScoreDetails {
                throw APIError.invalidParameter("a score carries at most \(Limits.maximumScoreDetails) details; one for \(new.category) has \(details.count)")
            }
            if let attachment = score.attachment {
                guard definition.verification != nil else {
                    throw APIError.invalidParameter("\(new.category) does not verify scores, so it takes no attachment (only boards with verification do)")
                }
                attached += attachment.count
            }
            return CheckedScore(score: new, board: definition, report: score)
        }
        guard attached <= Limits.maximumScoreAttachmentBytes else {
            throw APIError.invalidParameter("a report's attachments total at most \(Limits.maximumScoreAttachmentBytes) bytes; this one's total \(attached)")
        }
        try limiter.take(.reports, for: session.playerID, cost: scores.count)
        var counter: Int64?
        if scores.contains(where: { $0.board.writePolicy == .signed }) {
            counter = try await reportKeys.verify(
                body: body, counter: headers[values: .reportCounter].first, signature: headers[values: .reportSignature].first, session: session,
                database: database)
        }
        let plain = scores.filter { $0.board.verification == nil }.map(\.score)
        var result = ScoreReportResult(scores: [])
        if plain.isEmpty {
            if let counter { try await reportKeys.take(counter, session: session, database: database) }
        } else {
            result = try await store(
                plain, reportID: batch.reportID, game: game, environment: device.environment.rawValue, playerID: session.playerID, now: now,
                locale: device.locale, counter: counter.map { (session, $0) })
        }
        let toVerify = scores.enumerated().compactMap { position, checked -> ScoreToVerify? in
            guard let verification = checked.board.verification else { return nil }
            return ScoreToVerify(
                position: position, score: checked.score, details: checked.report.details ?? [], attachment: checked.report.attachment,
                timeoutMillis: verification.timeoutMillis)
        }
        if !toVerify.isEmpty {
            let (entries, submissions) = try await verify(
                toVerify, reportID: batch.reportID, game: game, environment: device.environment.rawValue, playerID: session.playerID, now: now,
                locale: device.locale)
            result.scores += entries
            result.submissions = submissions
        }
        return result
    }

    /// A device's score as checked: what is stored, its board, and what the device sent.
    private struct CheckedScore {
        var score: NewScore
        var board: LeaderboardDefinition
        var report: ScoreReport
    }

    /// A new key for the session's signed reports.
    func issueReportKey(session: AuthenticatedSession) async throws -> ReportKey {
        try await reportKeys.issue(for: session, database: database, now: clock.nowMillis())
    }

    /// Stores one score a studio's game server reported for `playerID` (any board, whatever its write policy), dated
    /// `date` (nil: now; kept in the plausible window as a device's date is), once per `reportID`.
    func serverReport(
        _ score: ScoreReport, reportID: String, game: Game, environment: Environment, playerID: String
    ) async throws -> ScoreReportResult {
        let now = clock.nowMillis()
        let new = try Self.newScore(
            score, game: game, environment: environment.rawValue, dating: ScoreDating(now: now, deviceTime: nil), occurrences: index.occurrences)
        return try await store(
            [new], reportID: reportID, game: game, environment: environment.rawValue, playerID: playerID, now: now, locale: game.defaultLocale)
    }

    /// Stores checked scores of one player (all or none) and ranks them; a tournament's entry rules apply. A signed
    /// report's `counter` is taken in the same write (a tournament's report takes it just before).
    private func store(
        _ scores: [NewScore], reportID: String, game: Game, environment: String, playerID: String, now: Int64, locale: String,
        counter: (session: AuthenticatedSession, counter: Int64)? = nil
    ) async throws -> ScoreReportResult {
        if scores.contains(where: { Self.tournament($0.category, in: game) != nil }) {
            if let counter { try await reportKeys.take(counter.counter, session: counter.session, database: database) }
            let (records, attemptsLeft) = try await reportToTournaments(
                reportID, scores, game: game, environment: environment, playerID: playerID, now: now)
            rank(records, bundleID: game.bundleID, environment: environment)
            await challenges.scoresStored(records, game: game, environment: environment, playerID: playerID)
            return ScoreReportResult(
                scores: records.map { record in
                    var entry = entry(record, rank: 0, game: game, locale: locale)
                    entry.attemptsLeft = attemptsLeft[record.category] ?? nil
                    return entry
                })
        }
        let records: [ScoreRecord]
        do {
            records =
                try await database.reportScores(
                    reportID: reportID, scores, bundleID: game.bundleID, environment: environment, playerID: playerID, now: now,
                    counter: counter.map { ($0.session.sessionID, $0.counter) }) ?? []
        } catch is ReportCounterTaken {
            throw ReportKeys.counterTaken(counter?.counter ?? 0)
        }
        rank(records, bundleID: game.bundleID, environment: environment)
        await challenges.scoresStored(records, game: game, environment: environment, playerID: playerID)
        return ScoreReportResult(scores: records.map { entry($0, rank: 0, game: game, locale: locale) })
    }

    /// A reported score checked against `game`'s leaderboards (`category` reportable, value in range), dated, and on a
    /// recurring leaderboard placed in the occurrence running when the server received it in `environment` (none
    /// running: refused).
    static func newScore(_ score: ScoreReport, game: Game, environment: String, dating: ScoreDating, occurrences: OccurrenceTracker) throws
        -> NewScore
    {
        let definition = try reportable(score.category, in: game)
        guard definition.valueRange.contains(score.value) else { throw APIError.valueOutOfRange(score.value, definition) }
        var occurrence: Int64?
        if let recurrence = definition.recurrence {
            guard
                let running = occurrences.receiving(
                    recurrence, category: definition.category, bundleID: game.bundleID, environment: environment, at: dating.now)
            else {
                throw APIError.noOccurrence(
                    definition.category,
                    next: recurrence.schedule.first(startingAfter: dating.now).map { OccurrenceTracker.localTime($0.start, in: recurrence.schedule.timeZone) })
            }
            occurrence = running.start
        }
        return NewScore(
            category: definition.category, value: score.value, context: score.context, higherIsBetter: definition.order == .descending,
            earnedAt: dating.earnedAt(score.date), occurrence: occurrence)
    }

    /// Puts stored reports on this node's boards and tells the other nodes (after the transaction that stored them).
    func rank(_ records: [ScoreRecord], bundleID: String, environment: String) {
        index.apply(records, bundleID: bundleID, environment: environment)
        if !records.isEmpty { bus.scoresStored() }
        metrics.leaderboardReports.increment(by: records.count)
    }

    /// One page of a leaderboard for the signed-in player.
    func page(_ query: LeaderboardQuery, device: DeviceIdentity, session: AuthenticatedSession) async throws -> LeaderboardPage {
        guard query.rangeStart >= 1 else {
            throw APIError.invalidRange("ranks start at 1; rangeStart was \(query.rangeStart)")
        }
        guard (1...Limits.maximumLeaderboardRange).contains(query.rangeLength) else {
            throw APIError.invalidRange("a page holds 1 to \(Limits.maximumLeaderboardRange) ranks; rangeLength was \(query.rangeLength)")
        }
        guard query.rangeStart <= Int.max - query.rangeLength else { throw APIError.invalidRange("rangeStart \(query.rangeStart) is too large") }
        if let playerIDs = query.playerIDs, playerIDs.count > Limits.maximumPlayerIDsPerRequest {
            throw APIError.invalidParameter("at most \(Limits.maximumPlayerIDsPerRequest) playerIDs per query; got \(playerIDs.count)")
        }
        let game = device.game
        let now = clock.nowMillis()
        let (category, title, spec) = try Self.queryable(query.category, in: game, locale: device.locale)
        let (boardID, occurrence) = try boardToRead(
            category: category, game: game, environment: device.environment, occurrence: query.occurrence, lifetimeBest: query.lifetimeBest, now: now)
        let board = try await index.board(boardID, spec: spec, now: { [clock] in clock.nowMillis() })
        let me = index.players.number(for: session.playerID)
        let ranks = query.rangeStart...(query.rangeStart + query.rangeLength - 1)
        // A recurring board's occurrence (or lifetime bests) is one index: the rolling windows do not apply.
        let scope = boardID.occurrence != nil || query.lifetimeBest == true ? .allTime : Self.scope(query.timeScope)

        let ranked: (page: [(rank: Int, key: RankKey)], local: (rank: Int, key: RankKey)?, count: Int)
        if let playerIDs = query.playerIDs {
            let numbers = Set(playerIDs.compactMap { index.players.existingNumber(for: $0) })
            ranked = Self.rankAmong(numbers, me: me, board: board, scope: scope, now: now, ranks: ranks)
        } else if query.playerScope == .friendsOnly {
            let friends = try await database.read { try await $0.friendIDs(of: session.playerID) }
            let numbers = Set(friends.compactMap { index.players.existingNumber(for: $0) } + [me])
            ranked = Self.rankAmong(numbers, me: me, board: board, scope: scope, now: now, ranks: ranks)
        } else {
            ranked = board.withIndex(scope, now: now) { index in
                let page = index.entries(in: ranks).map { (rank: $0.rank, key: $0.key) }
                let local = index.rank(of: me).flatMap { rank in index.key(of: me).map { (rank: rank, key: $0) } }
                return (page, local, index.count)
            }
        }
        let ids = ranked.page.map(\.key.scoreID) + (ranked.local.map { [$0.key.scoreID] } ?? [])
        let records = Dictionary(try await scoreRecords(ids).map { ($0.scoreID, $0) }) { a, _ in a }
        let scores = ranked.page.compactMap { item in
            records[item.key.scoreID].map { entry($0, rank: item.rank, game: game, locale: device.locale) }
        }
        let local = ranked.local.flatMap { item in records[item.key.scoreID].map { entry($0, rank: item.rank, game: game, locale: device.locale) } }
        return LeaderboardPage(
            category: category, title: title, scores: scores, localPlayerScore: local, maxRange: ranked.count, occurrence: occurrence)
    }

    /// A player's best score on each of `game`'s leaderboards with its all-time rank (a recurring board's running
    /// occurrence; a recurring board without one, and a board without the player's score, are left out), for the
    /// studio's game servers.
    func standings(of playerID: String, game: Game, environment: Environment) async throws -> [ScoreEntry] {
        guard let number = index.players.existingNumber(for: playerID) else { return [] }
        let now = clock.nowMillis()
        var found: [(rank: Int, scoreID: Int64)] = []
        for definition in game.leaderboards {
            let (category, _, spec) = try Self.queryable(definition.category, in: game, locale: game.defaultLocale)
            guard
                let (boardID, _) = try? boardToRead(
                    category: category, game: game, environment: environment, occurrence: nil, lifetimeBest: nil, now: now)
            else { continue }
            let board = try await index.board(boardID, spec: spec, now: { [clock] in clock.nowMillis() })
            let standing = board.withIndex(.allTime, now: now) { index in
                index.rank(of: number).flatMap { rank in index.key(of: number).map { (rank: rank, scoreID: $0.scoreID) } }
            }
            if let standing { found.append(standing) }
        }
        let records = Dictionary(try await scoreRecords(found.map(\.scoreID)).map { ($0.scoreID, $0) }) { a, _ in a }
        return found.compactMap { item in records[item.scoreID].map { entry($0, rank: item.rank, game: game, locale: game.defaultLocale) } }
    }

    /// A page of any board with the players' aliases, for studios (admin key) and the web app; a recurring board's
    /// current occurrence, or `occurrence` (its start) while its scores are stored.
    func adminPage(
        game: Game, environment: Environment, category: String, timeScope: LeaderboardTimeScope,
        rangeStart: Int, rangeLength: Int, locale: String, occurrence: Date? = nil
    ) async throws -> AdminLeaderboardPage {
        guard rangeStart >= 1, (1...Limits.maximumLeaderboardRange).contains(rangeLength), rangeStart <= Int.max - rangeLength else {
            throw APIError.invalidRange("rangeStart must be 1 or more and rangeLength 1 to \(Limits.maximumLeaderboardRange)")
        }
        let (_, _, spec) = try Self.queryable(category, in: game, locale: locale)
        let now = clock.nowMillis()
        let (boardID, _) = try boardToRead(
            category: category, game: game, environment: environment, occurrence: occurrence, lifetimeBest: nil, now: now, anyStored: true)
        let board = try await index.board(boardID, spec: spec, now: { [clock] in clock.nowMillis() })
        let (page, count) = board.withIndex(boardID.occurrence != nil ? .allTime : Self.scope(timeScope), now: now) { index in
            (index.entries(in: rangeStart...(rangeStart + rangeLength - 1)), index.count)
        }
        let records = try await scoreRecords(page.map(\.key.scoreID))
        let aliases = try await database.read { storage in
            let players = try await storage.players(ids: Array(Set(records.map(\.playerID))), environment: environment.rawValue)
            return Dictionary(players.map { ($0.playerID, $0.alias) }) { a, _ in a }
        }
        let byID = Dictionary(records.map { ($0.scoreID, $0) }) { a, _ in a }
        let entries = page.compactMap { item in
            byID[item.key.scoreID].map { AdminScoreEntry(score: entry($0, rank: item.rank, game: game, locale: locale), alias: aliases[$0.playerID] ?? "") }
        }
        return AdminLeaderboardPage(category: category, environment: environment, timeScope: timeScope, entries: entries, maxRange: count)
    }

    /// A player's all-time rank on a board (a recurring board's current occurrence), for the studio console's view
    /// of their neighbourhood; nil when they are not ranked (no score, or hidden).
    func adminRank(game: Game, environment: Environment, category: String, playerID: String) async throws -> Int? {
        let (_, _, spec) = try Self.queryable(category, in: game, locale: game.defaultLocale)
        let now = clock.nowMillis()
        let (boardID, _) = try boardToRead(
            category: category, game: game, environment: environment, occurrence: nil, lifetimeBest: nil, now: now, anyStored: true)
        let board = try await index.board(boardID, spec: spec, now: { [clock] in clock.nowMillis() })
        guard let number = index.players.existingNumber(for: playerID) else { return nil }
        return board.withIndex(.allTime, now: now) { $0.rank(of: number) }
    }

    /// Erases every score a player reported in a game (a cheater's) and takes them off its boards.
    func removeScores(game: Game, playerID: String) async throws -> Int {
        let now = clock.nowMillis()
        let removed = try await database.write { storage in
            let removed = try await storage.deleteScores(bundleID: game.bundleID, playerID: playerID)
            try await storage.noteScoresRemoved(bundleID: game.bundleID, playerID: playerID, now: now)
            return removed
        }
        bus.scoresRemoved(playerID: playerID, bundleID: game.bundleID)
        // A report of the player stored just after the erasure (and maybe applied already) stays on the boards.
        try await index.removeErased(playerID: playerID, bundleID: game.bundleID) {
            try await database.read { try await $0.boardScores(playerID: playerID, bundleID: game.bundleID) }
        }
        return removed
    }

    /// The stored reports with these ids (missing ones skipped): from the cache, the rest from storage.
    private func scoreRecords(_ ids: [Int64]) async throws -> [ScoreRecord] {
        let (found, missing) = index.records.lookup(ids)
        guard !missing.isEmpty else { return found }
        let read = try await database.read { try await $0.scores(ids: missing) }
        index.records.store(read)
        return found + read
    }

    /// Ranks a set of players among themselves (friends scope, named players).
    private static func rankAmong(
        _ players: Set<UInt32>, me: UInt32, board: Board, scope: Board.Scope, now: Int64, ranks: ClosedRange<Int>
    ) -> (page: [(rank: Int, key: RankKey)], local: (rank: Int, key: RankKey)?, count: Int) {
        let keyed = board.withIndex(scope, now: now) { index in
            players.compactMap { player in index.key(of: player).map { (player: player, key: $0) } }
        }.sorted { $0.key < $1.key }
        let all = keyed.enumerated().map { (rank: $0.offset + 1, player: $0.element.player, key: $0.element.key) }
        let page = all.filter { ranks.contains($0.rank) }.map { (rank: $0.rank, key: $0.key) }
        let local = all.first { $0.player == me }.map { (rank: $0.rank, key: $0.key) }
        return (page, local, all.count)
    }

    /// A stored score as the wire shows it, formatted by its leaderboard's format for `locale`.
    func entry(_ record: ScoreRecord, rank: Int, game: Game, locale: String) -> ScoreEntry {
        let definition = game.leaderboards.first { $0.category == record.category }
        let formatted =
            definition.map { definition in
                formatter.format(
                    record.value, format: definition.format, currency: definition.currency,
                    suffix: Localization.value(definition.suffix, locale: locale, fallback: game.defaultLocale), locale: locale)
            } ?? String(record.value)
        return ScoreEntry(
            category: record.category, playerID: record.playerID, value: record.value, context: record.context,
            date: StoredTime.date(record.earnedAt), formattedValue: formatted, rank: rank, occurrence: record.occurrence.map(StoredTime.date))
    }

    static func scope(_ timeScope: LeaderboardTimeScope) -> Board.Scope {
        switch timeScope {
        case .allTime: .allTime
        case .today: .today
        case .week: .week
        }
    }

    /// The leaderboard a score may be reported to: nil means the default; aggregates take no reports.
    static func reportable(_ category: String?, in game: Game) throws -> LeaderboardDefinition {
        if let category {
            if let definition = game.leaderboards.first(where: { $0.category == category }) { return definition }
            if let aggregate = game.aggregates.first(where: { $0.category == category }) { throw APIError.reportToAggregate(aggregate) }
            throw APIError.unknownCategory(category, game: game)
        }
        // The manifest loader refuses an aggregate as the default: a report without a category goes to a leaderboard.
        if let definition = game.leaderboards.first(where: \.isDefault) { return definition }
        throw APIError.unknownCategory("(default)", game: game)
    }

    /// The board a query reads: its category, localized title and spec.
    static func queryable(_ category: String?, in game: Game, locale: String) throws -> (String, String, LeaderboardIndex.Spec) {
        let title = { (text: LocalizedText) in Localization.text(text, locale: locale, fallback: game.defaultLocale) }
        let wanted = category ?? (game.leaderboards.first(where: \.isDefault)?.category ?? game.aggregates.first(where: \.isDefault)?.category)
        guard let wanted else { throw APIError.unknownCategory("(default)", game: game) }
        if let definition = game.leaderboards.first(where: { $0.category == wanted }) {
            return (wanted, title(definition.title), .init(higherIsBetter: definition.order == .descending, categories: [wanted]))
        }
        if let aggregate = game.aggregates.first(where: { $0.category == wanted }) {
            // The loader checked that members share one order.
            let order = game.leaderboards.first { aggregate.members.contains($0.category) }?.order ?? .descending
            return (wanted, title(aggregate.title), .init(higherIsBetter: order == .descending, categories: aggregate.members))
        }
        throw APIError.unknownCategory(wanted, game: game)
    }

    /// A report id is 8 to 64 printable ASCII characters (U+0021…U+007E: no spaces, no control characters).
    static func validateReportID(_ reportID: String) throws {
        guard (8...64).contains(reportID.unicodeScalars.count), reportID.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw APIError.invalidParameter("reportID must be 8 to 64 printable ASCII characters, without spaces or control characters (a UUID is fine)")
        }
    }
}

extension APIError {
    /// A score outside its leaderboard's bounds.
    static func valueOutOfRange(_ value: Int64, _ leaderboard: LeaderboardDefinition) -> APIError {
        APIError(
            .leaderboardValueOutOfRange,
            "\(leaderboard.category) takes values from \(leaderboard.valueRange.lowerBound) to \(leaderboard.valueRange.upperBound); \(value) is outside")
    }

    static func unknownCategory(_ category: String, game: Game) -> APIError {
        let shown = category.count <= 100 ? category : String(category.prefix(100)) + "…"
        let known = (game.leaderboards.map(\.category) + game.aggregates.map(\.category)).joined(separator: ", ")
        return APIError(.leaderboardUnknownCategory, "this game has no leaderboard '\(shown)'; its leaderboards are: \(known.isEmpty ? "none" : known)")
    }
    static func reportToAggregate(_ aggregate: AggregateDefinition) -> APIError {
        APIError(
            .leaderboardAggregate,
            "'\(aggregate.category)' is an aggregate leaderboard; report to one of its members: \(aggregate.members.joined(separator: ", "))")
    }
    static func serverOnlyLeaderboard(_ category: String) -> APIError {
        APIError(.leaderboardServerOnly, "\(category) takes scores from the game's servers only (writePolicy serverOnly), not from devices")
    }

    static func scoreForAnotherPlayer(_ playerID: String) -> APIError {
        APIError(.leaderboardNotLocalPlayer, "scores are always reported for the signed-in player; this one names \(playerID.prefix(64))")
    }
    static func invalidRange(_ message: String) -> APIError {
        APIError(.leaderboardInvalidRange, message)
    }
    /// A score for a recurring leaderboard while none of its occurrences runs; `next` is when the next one starts.
    static func noOccurrence(_ category: String, next: String?) -> APIError {
        APIError(
            .leaderboardNoOccurrence,
            "no occurrence of '\(category)' is running, so it takes no scores now; "
                + (next.map { "the next one starts at \($0)" } ?? "its schedule names no further occurrence"))
    }
}

extension LeaderboardService {
    /// Builds every board of `games` from storage (both environments), so that the first queries are fast.
    func warm(games: [Game], logger: Logger) async throws {
        let started = ContinuousClock.now
        if !games.isEmpty { _ = index.hidden.replace(with: try await database.read { try await $0.hiddenPlayers() }) }
        var boards = 0
        for game in games {
            let categories = game.leaderboards.map(\.category) + game.aggregates.map(\.category)
            for environment in Environment.allCases {
                for category in categories {
                    let (_, _, spec) = try Self.queryable(category, in: game, locale: game.defaultLocale)
                    let id =
                        (try? boardToRead(
                            category: category, game: game, environment: environment, occurrence: nil, lifetimeBest: nil, now: clock.nowMillis()
                        ).id) ?? .init(bundleID: game.bundleID, environment: environment.rawValue, category: category)
                    _ = try await index.board(id, spec: spec, now: { [clock] in clock.nowMillis() })
                    boards += 1
                }
            }
        }
        logger.info("leaderboards ready", metadata: [LogKey.boards: "\(boards)", LogKey.duration: "\(ContinuousClock.now - started)"])
    }
}
