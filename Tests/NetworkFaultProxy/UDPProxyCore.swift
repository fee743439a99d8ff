import NIOCore
import Synchronization

/// The shared, lock-protected part of a `FaultyUDPProxy`: fault settings, the random source, counters and the
/// capture of client datagrams.
///
/// Every method is thread-safe; the router calls `judge` for each datagram from its event loop.
final class UDPProxyCore: Sendable {
    /// The way a datagram is travelling.
    enum Direction: Hashable, Sendable {
        /// From a client to the target server.
        case toServer
        /// From the target server back to a client.
        case toClient
    }

    /// What to do with a datagram that is not dropped.
    struct Verdict {
        /// How many times to send it: 1, or 2 when duplicated.
        let copies: Int
        /// Whether to hold it back until the next datagram in the same direction has been sent.
        let holdBack: Bool
    }

    /// Everything the lock protects.
    struct State: Sendable {
        /// Probability of dropping a datagram.
        var loss = 0.0
        /// Probability of holding a datagram back behind the next one.
        var reorder = 0.0
        /// Probability of sending a datagram twice.
        var duplicate = 0.0
        /// Whether every datagram is dropped.
        var blocked = false
        /// The seeded source of every random choice.
        var random: SplitMix64
        /// Counters so far.
        var statistics = FaultyUDPProxy.Statistics()
        /// The most recent client-to-server datagrams forwarded, oldest first.
        var captured = CircularBuffer<[UInt8]>()
    }

    /// How many client datagrams the capture keeps.
    static let captureLimit = 1000

    /// Settings, counters and capture.
    let state: Mutex<State>

    /// Creates the core, drawing randomness from `seed`.
    init(seed: UInt64) {
        state = Mutex(State(random: SplitMix64(seed: seed)))
    }

    /// Decides a datagram's fate and counts it: nil means dropped. Client datagrams that pass are captured.
    func judge(_ datagram: ByteBuffer, going direction: Direction) -> Verdict? {
        let copy = direction == .toServer ? Array(datagram.readableBytesView) : nil
        return state.withLock { state in
            if state.blocked || state.random.chance(state.loss) {
                state.statistics.dropped += 1
                return nil
            }
            let duplicate = state.random.chance(state.duplicate)
            let holdBack = state.random.chance(state.reorder)
            state.statistics.forwarded += 1
            if duplicate { state.statistics.duplicated += 1 }
            if let copy {
                if state.captured.count == Self.captureLimit { state.captured.removeFirst() }
                state.captured.append(copy)
            }
            return Verdict(copies: duplicate ? 2 : 1, holdBack: holdBack)
        }
    }

    /// Counts a held-back datagram that was sent after a later one.
    func noteReordered() {
        state.withLock { $0.statistics.reordered += 1 }
    }
}
