import ServiceLifecycle
import Synchronization

/// The realtime channels' heartbeat clock: one task for the whole server wakes every open channel once per
/// ``interval`` (a timer task of each channel's own cost memory and a wake-up apiece). Channels are spread over
/// ``slots`` parts of the interval, so ten thousand of them do not all beat in the same instant; each channel beats
/// every ``interval`` exactly, its first beat coming within one interval of joining.
final class HeartbeatTicker: Service {
    /// Time between two beats of one channel.
    let interval: Duration
    /// Parts the interval is cut into; channels join them in turn.
    let slots: Int

    private struct Members {
        var bySlot: [[Int: @Sendable () -> Void]]
        var nextID = 0
        var slot = 0
    }

    private let members: Mutex<Members>

    /// A ticker beating every `interval`, in `slots` groups.
    init(interval: Duration, slots: Int = 20) {
        self.interval = interval
        self.slots = max(slots, 1)
        members = Mutex(Members(bySlot: Array(repeating: [:], count: max(slots, 1))))
    }

    /// Calls `beat` once per ``interval`` (on the ticker's task: it must only hand the beat on) until
    /// ``leave(_:)`` with the returned id.
    func join(_ beat: @escaping @Sendable () -> Void) -> Int {
        members.withLock { members in
            members.nextID += 1
            members.bySlot[members.nextID % slots][members.nextID] = beat
            return members.nextID
        }
    }

    /// Stops the beats of `id`.
    func leave(_ id: Int) {
        _ = members.withLock { $0.bySlot[id % slots].removeValue(forKey: id) }
    }

    /// Beats until the server shuts down (the channels close themselves then).
    func run() async throws {
        let step = interval / slots
        let clock = ContinuousClock()
        var next = clock.now
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            // A fixed schedule: a late wake-up does not push every later beat back.
            next = next.advanced(by: step)
            try? await Task.sleep(until: next, clock: clock)
            beatNextSlot()
        }
    }

    /// Beats the members of the next slot (``run()`` calls it every ``interval`` / ``slots``).
    func beatNextSlot() {
        let beats = members.withLock { members in
            defer { members.slot = (members.slot + 1) % slots }
            return Array(members.bySlot[members.slot].values)
        }
        for beat in beats { beat() }
    }
}
