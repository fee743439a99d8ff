import GameCenterProtocol
import GameCenterStorage
import Logging
import ServiceLifecycle

/// Quarantines submissions whose node stopped while it asked the verifier: every ten seconds, those still `verifying`
/// a minute after they were made (longer than any verifier's budget). Any node may do it: the change is conditional.
struct SubmissionSweeper: Service {
    let database: Database
    let clock: ServerClock
    let logger: Logger

    static let interval: Duration = .seconds(10)
    /// How long a submission may stay `verifying`: twice the longest budget.
    static let staleAfterMillis: Int64 = 60_000

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while (try? await Task.sleep(for: Self.interval)) != nil {
                do {
                    try await sweep()
                } catch {
                    logger.warning("quarantining stale score submissions failed; trying again", metadata: [LogKey.error: "\(error)"])
                }
            }
        }
    }

    /// Quarantines the stale submissions once; answers how many.
    @discardableResult
    func sweep() async throws -> Int {
        let now = clock.nowMillis()
        let reason = "the server stopped while it asked the verifier"
        let swept = try await database.write { storage in
            let swept = try await storage.quarantineStaleSubmissions(before: now - Self.staleAfterMillis, reason: reason, now: now)
            for record in swept {
                try await LeaderboardService.announce(record, state: .quarantined, reason: reason, by: "verifier", now: now, in: storage)
            }
            return swept
        }
        if !swept.isEmpty { logger.notice("quarantined score submissions left verifying", metadata: ["count": "\(swept.count)"]) }
        return swept.count
    }
}
