import Synchronization

/// How many realtime channels each session has open, capped (`RateLimits.realtimeChannelsOpenPerSession`).
///
/// The upgrade request is refused with a clear 429 when the session is at the cap (``check(_:)``); the count
/// itself is taken when the channel opens (``open(_:)``), so two upgrades racing past the check still cannot
/// both stay open.
final class RealtimeChannelCap: Sendable {
    /// Channels one session may have open; 0 for no cap.
    let allowed: Int
    private let open = Mutex<[String: Int]>([:])

    init(allowed: Int) {
        self.allowed = allowed
    }

    /// Throws `request.rate_limited` when the session already has `allowed` channels open.
    func check(_ sessionID: String) throws(APIError) {
        guard allowed > 0 else { return }
        if open.withLock({ $0[sessionID, default: 0] }) >= allowed { throw APIError.tooManyRealtimeChannels(allowed) }
    }

    /// Counts a channel of the session as open; false (counting nothing) when it is at the cap.
    func open(_ sessionID: String) -> Bool {
        guard allowed > 0 else { return true }
        return open.withLock { counts in
            guard counts[sessionID, default: 0] < allowed else { return false }
            counts[sessionID, default: 0] += 1
            return true
        }
    }

    /// Counts a channel ``open(_:)`` let through as closed.
    func close(_ sessionID: String) {
        guard allowed > 0 else { return }
        open.withLock { counts in
            let left = counts[sessionID, default: 1] - 1
            counts[sessionID] = left > 0 ? left : nil
        }
    }
}
