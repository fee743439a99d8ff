import Foundation
import PostgresNIO

/// A turn-based match's change that keeps its members, on PostgreSQL, kept prepared: the match's record replaced if it
/// is still at the version read (compare-and-set), its data replaced when sent, and the change's events appended to
/// their players' streams, in one statement (a statement is atomic: no `BEGIN`/`COMMIT` around it). Every later part
/// writes only when the compare-and-set did. A player with several events takes consecutive sequence numbers, in the
/// order given; an event for a player who does not exist fails the whole statement (no sequence number), as the same
/// writes fail on SQLite. Answers one row: how many match rows were replaced (0 or 1).
struct TurnChangeStatement: PostgresPreparedStatement {
    static let sql = """
        WITH replaced AS (
            UPDATE turn_matches SET version = $1, status = $2, open_seats = $3, deadline = $4, state = $5
            WHERE match_id = $6 AND version = $7
            RETURNING match_id),
        data AS (
            UPDATE turn_match_data SET data = $8 WHERE match_id = $6 AND $8::BYTEA IS NOT NULL AND EXISTS (SELECT 1 FROM replaced)),
        numbered AS (
            UPDATE players AS p SET event_seq = p.event_seq + c.count
            FROM unnest($9::TEXT[], $10::BIGINT[]) AS c (player_id, count)
            WHERE p.player_id = c.player_id AND EXISTS (SELECT 1 FROM replaced)
            RETURNING p.player_id, p.event_seq, c.count),
        appended AS (
            INSERT INTO events (player_id, seq, kind, payload, created_at)
            SELECT e.player_id, numbered.event_seq - numbered.count + e.rank, $11, e.payload, $12
            FROM unnest($13::TEXT[], $14::TEXT[], $15::BIGINT[]) AS e (player_id, payload, rank) LEFT JOIN numbered USING (player_id)
            WHERE EXISTS (SELECT 1 FROM replaced))
        SELECT count(*) FROM replaced
        """
    typealias Row = Int64

    let record: TurnMatchRecord
    let expectedVersion: Int64
    let data: Data?
    let events: [(playerID: String, payload: String)]
    let kind: String
    let now: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 15)
        bindings.append(record.version)
        bindings.append(Int64(record.status))
        bindings.append(Int64(record.openSeats))
        bindings.append(record.deadline)
        bindings.append(record.state)
        bindings.append(record.matchID)
        bindings.append(expectedVersion)
        bindings.append(data.map { ByteBuffer(bytes: $0) })
        // Each player's events: how many, and each one's rank among them (1, 2, …) in the order given.
        var counts: [String: Int64] = [:]
        var ranks: [Int64] = []
        var players: [String] = []
        for event in events {
            if counts[event.playerID] == nil { players.append(event.playerID) }
            counts[event.playerID, default: 0] += 1
            ranks.append(counts[event.playerID]!)
        }
        bindings.append(players)
        bindings.append(players.map { counts[$0]! })
        bindings.append(kind)
        bindings.append(now)
        bindings.append(events.map(\.playerID))
        bindings.append(events.map(\.payload))
        bindings.append(ranks)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Int64.self)
    }
}
