import Synchronization

/// Where the bench's devices post the events they are told of, and where a sample waits for its device's event.
///
/// A sample expects an event before it causes one, so an event that arrives before the sample starts waiting is
/// kept, not missed; a wait that outlasts the timeout ends with nil.
final class ArrivalBoard: Sendable {
    private enum Slot {
        case expected
        case arrived(ContinuousClock.Instant)
        case waiting(CheckedContinuation<ContinuousClock.Instant?, Never>)
    }

    private let slots = Mutex<[Int: Slot]>([:])

    /// Marks `device` as about to be told of an event.
    func expect(_ device: Int) {
        slots.withLock { $0[device] = .expected }
    }

    /// Called by device `device` when an event reaches it.
    func arrived(_ device: Int) {
        let now = ContinuousClock.now
        let waiter: CheckedContinuation<ContinuousClock.Instant?, Never>? = slots.withLock { slots in
            switch slots[device] {
            case .expected:
                slots[device] = .arrived(now)
                return nil
            case .waiting(let continuation):
                slots[device] = nil
                return continuation
            case .arrived, nil:
                return nil
            }
        }
        waiter?.resume(returning: now)
    }

    /// When the event `device` expects arrived, or nil if it did not within `timeout`.
    func arrival(of device: Int, timeout: Duration) async -> ContinuousClock.Instant? {
        let timer = Task {
            try? await Task.sleep(for: timeout)
            let waiter: CheckedContinuation<ContinuousClock.Instant?, Never>? = slots.withLock { slots in
                guard case .waiting(let continuation) = slots[device] else { return nil }
                slots[device] = nil
                return continuation
            }
            waiter?.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let early: ContinuousClock.Instant? = slots.withLock { slots in
                if case .arrived(let instant) = slots[device] {
                    slots[device] = nil
                    return instant
                }
                slots[device] = .waiting(continuation)
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
    }
}
