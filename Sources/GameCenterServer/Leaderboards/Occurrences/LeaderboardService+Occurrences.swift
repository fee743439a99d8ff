import Foundation
import GameCenterProtocol
import GameCenterStorage

/// Which board of a recurring leaderboard a query reads, and how its answers show the occurrence.
extension LeaderboardService {
    /// A game's recorded occurrence starts and ends after `eventID` (``OccurrenceClock``), oldest first.
    func occurrenceEvents(game: Game, after eventID: Int64, limit: Int) async throws -> LeaderboardOccurrenceEventList {
        let records = try await database.read { try await $0.occurrenceEvents(bundleID: game.bundleID, after: eventID, limit: limit) }
        let decoder = WireCoding.makeDecoder()
        return LeaderboardOccurrenceEventList(
            events: try records.map { record in
                LeaderboardOccurrenceEvent(
                    eventID: record.eventID, category: record.category, environment: Environment(rawValue: record.environment) ?? .sandbox,
                    kind: LeaderboardOccurrenceEventKind(rawValue: record.kind) ?? .started, start: StoredTime.date(record.occurrence),
                    end: StoredTime.date(record.occurrenceEnd), recordedAt: StoredTime.date(record.recordedAt),
                    standings: try decoder.decode([AdminScoreEntry].self, from: Data(record.standings.utf8)))
            })
    }

    /// A recurring board's current occurrence in `environment` (a tournament's started early, else the running one,
    /// else the last, else the first to come) and how answers show it.
    func currentOccurrence(_ recurrence: LeaderboardDefinition.Recurrence, category: String, game: Game, environment: Environment, now: Int64)
        -> (occurrence: OccurrenceSchedule.Occurrence, info: LeaderboardOccurrence)?
    {
        let occurrences = index.occurrences
        let early = occurrences.early(recurrence, category: category, bundleID: game.bundleID, environment: environment.rawValue, at: now)
        guard let current = early ?? occurrences.current(recurrence, category: category, bundleID: game.bundleID, at: now) else { return nil }
        let keptFrom = occurrences.keptFrom(recurrence, category: category, bundleID: game.bundleID, at: now)
        return (current, occurrences.describe(current, of: recurrence, keptFrom: keptFrom, now: now, startedEarly: early != nil))
    }

    /// The board a query reads, with the occurrence it shows: a classic board; a recurring board's lifetime bests
    /// (`lifetimeBest`, when its manifest keeps them); or one of its occurrences (`occurrence`'s start; nil: current),
    /// which must be a start of its schedule and, unless `anyStored` (the admin's reads), still kept.
    func boardToRead(
        category: String, game: Game, environment: Environment, occurrence wanted: Date?, lifetimeBest: Bool?, now: Int64, anyStored: Bool = false
    ) throws -> (id: LeaderboardIndex.BoardID, occurrence: LeaderboardOccurrence?) {
        var id = LeaderboardIndex.BoardID(bundleID: game.bundleID, environment: environment.rawValue, category: category)
        guard let recurrence = game.leaderboards.first(where: { $0.category == category })?.recurrence else {
            guard wanted == nil, lifetimeBest != true else {
                throw APIError.invalidParameter("'\(category)' is a classic leaderboard: it has no occurrences and no lifetime-best view")
            }
            return (id, nil)
        }
        if lifetimeBest == true {
            guard recurrence.lifetimeBest else {
                throw APIError.invalidParameter("'\(category)' keeps no lifetime bests (its manifest's recurring.lifetimeBest is off)")
            }
            guard wanted == nil else { throw APIError.invalidParameter("ask for an occurrence or for lifetime bests, not both") }
            return (id, nil)
        }
        guard let wanted else {
            guard let (current, info) = currentOccurrence(recurrence, category: category, game: game, environment: environment, now: now) else {
                throw APIError.noOccurrence(category, next: nil)
            }
            id.occurrence = current.start
            return (id, info)
        }
        guard let start = StoredTime.checkedMillis(wanted) else {
            throw APIError.invalidParameter("occurrence is the start of one of '\(category)''s occurrences, as an answer gave it; that is not a time")
        }
        guard let found = recurrence.schedule.latest(startingAtOrBefore: start), found.start == start else {
            throw APIError.invalidParameter(
                "no occurrence of '\(category)' starts at \(OccurrenceTracker.localTime(start, in: TimeZone(identifier: "UTC")!)); ask for a start an answer gave"
            )
        }
        let occurrences = index.occurrences
        let keptFrom = occurrences.keptFrom(recurrence, category: category, bundleID: game.bundleID, at: now)
        if let keptFrom, start < keptFrom, !anyStored {
            throw APIError.invalidParameter(
                "'\(category)' keeps its last \(recurrence.keep ?? 0) occurrences, from \(OccurrenceTracker.localTime(keptFrom, in: recurrence.schedule.timeZone)); the one asked for is older"
            )
        }
        id.occurrence = start
        return (id, occurrences.describe(found, of: recurrence, keptFrom: keptFrom, now: now))
    }
}
