import DequeModule
import Synchronization

/// A source for game engines that own the microphone (SDL, Godot): the engine pushes 48 kHz mono samples in
/// any chunk size, the voice pipeline pulls 20 ms frames.
///
/// Safe to push from the engine's audio thread while another thread reads. The ring holds at most
/// ``capacity`` samples; when full, the oldest audio is dropped and counted in ``droppedSamples``.
public final class PCMPushSource: VoiceAudioSource, Sendable {
    private struct State {
        var ring: Deque<Int16> = []
        var dropped = 0
        var finished = false
    }

    /// The most samples held.
    public let capacity: Int
    private let state = Mutex(State())

    /// Creates an empty source holding at most `capacityFrames` 20 ms frames (1…500, default 10).
    public init(capacityFrames: Int = 10) throws(VoiceError) {
        guard (1...500).contains(capacityFrames) else {
            throw VoiceError(.invalidArgument, "push source capacity must be 1…500 frames of 20 ms, not \(capacityFrames)")
        }
        capacity = capacityFrames * VoiceFormat.samplesPerFrame
    }

    /// Appends 48 kHz mono samples, dropping the oldest held audio if the ring would overflow.
    public func push(_ samples: some Collection<Int16>) {
        state.withLock { s in
            s.ring.append(contentsOf: samples.suffix(capacity))
            let excess = s.ring.count - capacity
            s.dropped += max(samples.count - capacity, 0) + max(excess, 0)
            if excess > 0 { s.ring.removeFirst(excess) }
        }
    }

    /// Marks the input as over: once the ring drains, ``readFrame()`` reports ``VoiceFrameRead/end``.
    public func finish() { state.withLock { $0.finished = true } }

    /// Samples dropped because the ring was full.
    public var droppedSamples: Int { state.withLock { $0.dropped } }

    /// Samples waiting.
    public var bufferedSamples: Int { state.withLock { $0.ring.count } }

    /// The next frame if a full one is held, else ``VoiceFrameRead/pending`` (or ``VoiceFrameRead/end`` once finished and drained).
    public func readFrame() throws(VoiceError) -> VoiceFrameRead {
        state.withLock { s in
            let n = VoiceFormat.samplesPerFrame
            if s.ring.count >= n {
                let frame = Array(s.ring.prefix(n))
                s.ring.removeFirst(n)
                return .frame(frame)
            }
            guard s.finished else { return .pending }
            guard !s.ring.isEmpty else { return .end }
            let frame = Array(s.ring) + repeatElement(0, count: n - s.ring.count)
            s.ring.removeAll()
            return .frame(frame)
        }
    }
}
