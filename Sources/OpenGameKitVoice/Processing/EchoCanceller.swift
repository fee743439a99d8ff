import CSpeexDSP

/// Removes the far end's voice, played on the speakers, from the microphone signal (speexdsp's MDF echo canceller).
///
/// Give it each 20 ms frame captured together with the frame played at the same time. The filter adapts over
/// the first seconds. Owns C state, freed on deinit.
/// `@unchecked Sendable`: not thread-safe (C state): one owner at a time; it is Sendable only to move between threads.
public final class EchoCanceller: @unchecked Sendable {
    let state: OpaquePointer
    private var output = [Int16](repeating: 0, count: VoiceFormat.samplesPerFrame)

    /// Creates a canceller for echoes up to `tailMilliseconds` long (20…1000, default 200).
    public init(tailMilliseconds: Int = 200) throws(VoiceError) {
        guard (20...1000).contains(tailMilliseconds) else {
            throw VoiceError(.invalidArgument, "echo tail must be 20…1000 ms, not \(tailMilliseconds)")
        }
        guard let state = speex_echo_state_init(Int32(VoiceFormat.samplesPerProcessingBlock), Int32(VoiceFormat.sampleRate * tailMilliseconds / 1000)) else {
            throw VoiceError(.codecFailure, "speex_echo_state_init failed")
        }
        self.state = state
        var rate = Int32(VoiceFormat.sampleRate)
        speex_echo_ctl(state, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
    }

    deinit { speex_echo_state_destroy(state) }

    /// Returns `captured` with the echo of `played` removed; both are 960-sample mono frames.
    public func cancel(captured: [Int16], played: [Int16]) throws(VoiceError) -> [Int16] {
        for (name, frame) in [("captured", captured), ("played", played)] where frame.count != VoiceFormat.samplesPerFrame {
            throw VoiceError(.invalidArgument, "the \(name) frame must be \(VoiceFormat.samplesPerFrame) samples (20 ms at 48 kHz), not \(frame.count)")
        }
        captured.withUnsafeBufferPointer { rec in
            played.withUnsafeBufferPointer { play in
                output.withUnsafeMutableBufferPointer { out in
                    for start in stride(from: 0, to: VoiceFormat.samplesPerFrame, by: VoiceFormat.samplesPerProcessingBlock) {
                        cancel(block: rec.baseAddress! + start, played: play.baseAddress! + start, into: out.baseAddress! + start)
                    }
                }
            }
        }
        return output
    }

    /// Cancels the echo of one block (``VoiceFormat/samplesPerProcessingBlock`` samples) of `captured` into `out`.
    func cancel(block captured: UnsafePointer<Int16>, played: UnsafePointer<Int16>, into out: UnsafeMutablePointer<Int16>) {
        speex_echo_cancellation(state, captured, played, out)
    }
}
