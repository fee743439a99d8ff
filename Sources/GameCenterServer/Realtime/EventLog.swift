import Foundation
import GameCenterProtocol
import GameCenterStorage

/// Appends durable events to players' streams inside a write transaction.
///
/// Usage: collect the recipients inside `Database.write`, then call ``EventBus/publish(_:)`` for each after the
/// commit, so that a subscriber woken by the bus always finds the event in storage.
enum EventLog {
    /// Stores `payload` as an event of `kind` for `playerID`; returns its sequence number.
    static func append<Payload: Encodable>(
        _ kind: EventKind, _ payload: Payload, to playerID: String, now: Int64, in storage: StorageSession
    ) async throws -> Int64 {
        try await storage.appendEvent(playerID: playerID, kind: kind.rawValue, payload: try self.payload(payload), now: now)
    }

    /// `payload` as stored in an event row (JSON).
    static func payload<Payload: Encodable>(_ payload: Payload) throws -> String {
        String(decoding: try WireCoding.makeEncoder().encode(payload), as: UTF8.self)
    }
}
