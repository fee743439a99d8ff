import DequeModule
import Synchronization

/// A sink for game engines that own the speakers (SDL, Godot): the voice pipeline writes 20 ms stereo frames,
/// the engine's audio callback pulls interleaved 48 kHz stereo samples in any count.
///
/// Safe to pull from the engine's audio thread while another thread writes. The ring holds at most
/// ``capacity`` samples; when full, the oldest audio is dropped and counted in ``droppedSamples``. A pull
/// that finds too little audio is padded with silence and counted in ``underrunSamples``.
public final class PCMPullSink: VoiceAudioSink, Sendable {
    private struct State {
        var ring: Deque<Int16> = []
        var dropped = 0
        var underrun = 0
    }

    /// The most samples held (interleaved, so two per stereo sample frame).
    public let capacity: Int
    private let state = Mutex(State())

    /// Creates an empty sink holding at most `capacityFrames` 20 ms frames (1…500, default 10).
    public init(capacityFrames: Int = 10) throws(VoiceError) {
        guard (1...500).contains(capacityFrames) else {
            throw VoiceError(.invalidArgument, "pull sink capacity must be 1…500 frames of 20 ms, not \(capacityFrames)")
        }
        capacity = capacityFrames * VoiceFormat.stereoSamplesPerFrame
    }

    /// Appends one 1,920-sample interleaved stereo frame, dropping the oldest held audio if the ring is full.
    public func writeFrame(_ frame: [Int16]) throws(VoiceError) {
        guard frame.count == VoiceFormat.stereoSamplesPerFrame else {
            throw VoiceError(
                .invalidArgument, "a stereo frame is \(VoiceFormat.stereoSamplesPerFrame) samples (20 ms at 48 kHz, interleaved), not \(frame.count)")
        }
        state.withLock { s in
            s.ring.append(contentsOf: frame)
            let excess = s.ring.count - capacity
            if excess > 0 {
                // Whole stereo pairs, so left and right never swap.
                let drop = excess + excess % 2
                s.ring.removeFirst(drop)
                s.dropped += drop
            }
        }
    }

    /// Fills `buffer` with interleaved stereo samples, silence where the ring runs dry; returns the real samples given.
    @discardableResult
    public func pull(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        state.withLock { s in
            let n = min(buffer.count, s.ring.count)
            for i in 0..<n { buffer[i] = s.ring[i] }
            s.ring.removeFirst(n)
            for i in n..<buffer.count { buffer[i] = 0 }
            s.underrun += buffer.count - n
            return n
        }
    }

    /// Samples dropped because the ring was full.
    public var droppedSamples: Int { state.withLock { $0.dropped } }

    /// Silent samples handed out because the ring ran dry.
    public var underrunSamples: Int { state.withLock { $0.underrun } }
}
