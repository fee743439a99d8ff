import Synchronization

/// Counters of what the relay forwarded and dropped, for operators and tests (`GET /admin/v1/relay/statistics`).
final class RelayStatistics: Sendable {
    /// The counters; each is reported under its case name.
    enum Counter: Int, CaseIterable, Sendable {
        /// Reliable messages accepted from senders.
        case reliableAccepted
        /// Reliable messages a sender resent that the relay already had (dropped).
        case reliableDuplicates
        /// Unreliable messages forwarded to a receiver (UDP or WebSocket).
        case unreliableForwarded
        /// Datagrams that named no open connection.
        case datagramsUnknownConnection
        /// Datagrams that failed authentication (forged, corrupted, or sealed with another key).
        case datagramsForged
        /// Authentic datagrams seen before (replays) or too old for the replay window.
        case datagramsReplayed
        /// Datagrams too short, too long, or with a malformed body.
        case datagramsMalformed
        /// Datagrams to devices the kernel did not take (the UDP send buffer was full): dropped.
        case datagramsNotSent
        /// Unreliable messages dropped because their sender was over its rate limit.
        case unreliableRateLimited
        /// Unreliable messages dropped because a receiver's WebSocket queue was full.
        case unreliableQueueFull
        /// Messages addressed to someone who is not a member of the match (dropped, sender told).
        case nonMemberRecipients
        /// Relay connections closed because the device broke the protocol (bad frame, oversized message).
        case protocolErrors
        /// Members disconnected for silence, flooding, or not keeping up.
        case membersTimedOut, membersFlooding, membersTooSlow
        /// Voice packets forwarded to a member listening to their channel (UDP or WebSocket).
        case voiceForwarded
        /// Voice packets not sent to a member in their channel who stopped receiving it (the bandwidth `stop()` saves).
        case voiceWithheld
        /// Voice packets dropped because their sender was not in the channel, or may not use voice.
        case voiceRefused
        /// Voice packets dropped because a receiver's WebSocket queue was full.
        case voiceQueueFull
    }

    /// One counter (atomics cannot be copied into an array themselves).
    private final class Cell: Sendable {
        let value = Atomic<Int>(0)
    }

    /// One cell per counter, at the counter's raw value (`add` runs for every datagram: no hashing there).
    private let cells: [Cell]

    init() {
        cells = Counter.allCases.map { _ in Cell() }
    }

    /// Adds `amount` to `counter`.
    func add(_ counter: Counter, _ amount: Int = 1) {
        cells[counter.rawValue].value.add(amount, ordering: .relaxed)
    }

    /// Every counter's current value, by name.
    func snapshot() -> [String: Int] {
        Dictionary(uniqueKeysWithValues: Counter.allCases.map { (String(describing: $0), cells[$0.rawValue].value.load(ordering: .relaxed)) })
    }
}
