import Foundation
import NetworkFaultProxy
import OpenGameKit
import Testing

/// Test devices: each a separate `GKGameCenter` with its own storage folder, as separate phones would be.
enum Devices {
    static func make(_ server: LiveServer, storage: URL? = nil, bundleID: String = "com.example.tapper") -> GKGameCenter {
        GKGameCenter(
            server: server.url, bundleID: bundleID, environment: .sandbox,
            storageDirectory: storage ?? FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)"))
    }

    /// A device with a new account signed up on it.
    static func signedUp(_ server: LiveServer, alias: String, underage: Bool = false) async throws -> (GKGameCenter, account: String) {
        let device = make(server)
        let account = "\(alias.lowercased())-\(UUID().uuidString.prefix(8).lowercased())"
        try await device.localPlayer.authenticate(.signUp(account: account, password: "password-\(alias)", alias: alias, underage: underage))
        return (device, account)
    }
}

/// Waits for the first event (device or match event) that `match` accepts, failing after `seconds`.
func nextEvent<Event: Sendable, T: Sendable>(
    _ events: AsyncStream<Event>, within seconds: Double = 10, _ match: @escaping @Sendable (Event) -> T?
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            for await event in events { if let value = match(event) { return value } }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw LiveServerError("no matching event within \(seconds) s")
        }
        return value
    }
}

/// The match's other members once every member has connected to the relay (`expectedPlayerCount` 0).
func allConnected(_ match: GKMatch, within timeout: Duration = .seconds(10)) async throws -> [String] {
    try await waitUntil("every member of match \(match.matchID) connected to the relay", within: timeout) { match.expectedPlayerCount == 0 }
    return match.playerIDs
}

/// Collects what an `authenticateHandler` was called with.
final class HandlerLog: @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [(any Error)?] = []

    func record(_ error: (any Error)?) { lock.withLock { calls.append(error) } }
    var count: Int { lock.withLock { calls.count } }
    var codes: [GKError.Code?] { lock.withLock { calls.map { ($0 as? GKError)?.code } } }
}
