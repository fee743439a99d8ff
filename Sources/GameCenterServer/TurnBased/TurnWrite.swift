import Foundation
import GameCenterProtocol
import GameCenterStorage

/// What one change of a match writes, prepared before its transaction: the new state's record, its members when they
/// changed, and the events its notices become (encoded once per kind of recipient). The transaction then only sends
/// statements, so SQLite's single writer is held for the writes alone.
struct TurnWrite: Sendable {
    let record: TurnMatchRecord
    /// Forget the match instead of storing it (every participant removed it).
    let forget: Bool
    /// The members, when they differ from before the change.
    let members: [TurnMatchMember]?
    /// Each notice's events: one per recipient.
    let events: [[(playerID: String, payload: String)]]
    /// The players the events are for.
    let told: Set<String>

    init(before: TurnMatchState, after: TurnMatchState, environment: String, notices: [TurnNotice], settings: TurnBasedSettings) throws {
        record = try TurnBasedService.record(after, environment: environment)
        forget = after.isForgotten
        let members = TurnBasedService.members(after)
        self.members = members == TurnBasedService.members(before) ? nil : members
        (events, told) = try Self.events(notices, before: before, after: after, settings: settings)
    }

    /// Stores the change if the match is still at `expectedVersion`; false (having written nothing) when another write
    /// came first.
    func store(expectedVersion: Int64, data: Data?, now: Int64, in storage: StorageSession) async throws -> Bool {
        if keepsMembers {
            return try await storage.storeTurnChange(
                record, expectedVersion: expectedVersion, data: data, events: events.flatMap { $0 }, kind: EventKind.turnBased.rawValue, now: now)
        }
        if forget {
            guard try await storage.deleteTurnMatch(record.matchID, expectedVersion: expectedVersion) else { return false }
        } else {
            guard try await storage.updateTurnMatch(record, expectedVersion: expectedVersion, data: data, members: members) else { return false }
        }
        for batch in events {
            _ = try await storage.appendEvents(batch, kind: EventKind.turnBased.rawValue, now: now)
        }
        return true
    }

    /// Whether the change keeps the match and its members (most turns): then ``store(expectedVersion:data:now:in:)``
    /// sends one statement on PostgreSQL.
    var keepsMembers: Bool { !forget && members == nil }

    /// One event per notice and recipient; the payload differs between recipients only in whether the turn became
    /// theirs, so it is encoded at most twice per notice.
    private static func events(_ notices: [TurnNotice], before: TurnMatchState, after: TurnMatchState, settings: TurnBasedSettings) throws -> (
        [[(playerID: String, payload: String)]], Set<String>
    ) {
        guard !notices.isEmpty else { return ([], []) }
        let match = TurnBasedService.info(after, settings: settings, exchangeData: false)
        let currentPlayer = after.current.flatMap { after.seats[$0].playerID }
        let previousPlayer = before.current.flatMap { before.seats[$0].playerID }
        var told = Set<String>()
        var batches: [[(playerID: String, payload: String)]] = []
        for notice in notices {
            var payloads: [Bool: String] = [:]
            var batch: [(playerID: String, payload: String)] = []
            for recipient in Set(notice.recipients).sorted() {
                let becameActive = recipient == currentPlayer && (previousPlayer != recipient || before.current != after.current)
                if payloads[becameActive] == nil {
                    payloads[becameActive] = try EventLog.payload(
                        TurnBasedEventInfo(
                            kind: notice.kind, match: match, actorIndex: notice.actor, becameActive: becameActive,
                            exchange: notice.exchange.map { TurnBasedService.info($0) }, message: notice.message))
                }
                batch.append((recipient, payloads[becameActive]!))
                told.insert(recipient)
            }
            batches.append(batch)
        }
        return (batches, told)
    }
}
