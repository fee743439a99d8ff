import Foundation
import OpenGameKit

/// A match delegate that keeps everything it hears, for tests to wait on.
final class MatchInbox: GKMatchDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var data: [(player: String, bytes: Data)] = []
    private var states: [(player: String, state: GKPlayerConnectionState, at: ContinuousClock.Instant)] = []
    private var failures: [(any Error)?] = []

    /// Becomes `match`'s delegate.
    init(_ match: GKMatch) {
        match.delegate = self
    }

    func match(_ match: GKMatch, didReceive data: Data, fromPlayer playerID: String) {
        lock.withLock { self.data.append((playerID, data)) }
    }

    func match(_ match: GKMatch, player playerID: String, didChange state: GKPlayerConnectionState) {
        let now = ContinuousClock.now
        lock.withLock { states.append((playerID, state, now)) }
    }

    func match(_ match: GKMatch, didFailWithError error: (any Error)?) {
        lock.withLock { failures.append(error) }
    }

    /// Messages received from `player`, in arrival order, as text.
    func texts(from player: String) -> [String] {
        lock.withLock { data.filter { $0.player == player }.map { String(decoding: $0.bytes, as: UTF8.self) } }
    }

    /// Every message received, with its sender.
    var received: [(player: String, bytes: Data)] { lock.withLock { data } }

    /// The states `player` went through.
    func states(of player: String) -> [GKPlayerConnectionState] {
        lock.withLock { states.filter { $0.player == player }.map(\.state) }
    }

    /// When the delegate first heard that `player` went to `state`, if it did.
    func time(of state: GKPlayerConnectionState, for player: String) -> ContinuousClock.Instant? {
        lock.withLock { states.first { $0.player == player && $0.state == state }?.at }
    }

    /// The errors that ended the match.
    var failed: [(any Error)?] { lock.withLock { failures } }
}
