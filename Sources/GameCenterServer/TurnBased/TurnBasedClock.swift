import GameCenterProtocol
import Logging
import ServiceLifecycle

/// The server's clock acting on turn-based matches: every ``interval`` it moves on the turns and exchanges whose
/// timeout passed. On several nodes each node runs one; a match changes once, as every change is a compare-and-set
/// on its version.
struct TurnBasedClock: Service {
    let turns: TurnBasedService
    let interval: Duration
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                try await turns.expireDue()
            } catch {
                logger.warning("turn-based timeouts could not be applied now; trying again", metadata: [LogKey.error: "\(error)"])
            }
            // A graceful shutdown ends the wait, not only the next loop.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
