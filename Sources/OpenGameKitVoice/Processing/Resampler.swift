import CSpeexDSP

/// Converts mono Int16 audio between sample rates (e.g. a 22,050 Hz WAV to 48 kHz), on speexdsp's resampler.
///
/// Keeps filter state between calls, so feed one stream's chunks in order. The output is aligned with the
/// input (the filter's start-up delay is skipped), so call ``flush()`` at the end for the last samples. Owns C state, freed on deinit.
/// `@unchecked Sendable`: not thread-safe (C state): one owner at a time; it is Sendable only to move between threads.
public final class Resampler: @unchecked Sendable {
    /// Sample rates accepted, in Hz.
    public static let rateRange = 1_000...384_000

    private let state: OpaquePointer
    /// The input rate in Hz.
    public let inputRate: Int
    /// The output rate in Hz.
    public let outputRate: Int

    /// Creates a resampler; `quality` is speex's 0 (fastest) … 10 (best), default 5.
    public init(from inputRate: Int, to outputRate: Int, quality: Int = 5) throws(VoiceError) {
        for rate in [inputRate, outputRate] where !Self.rateRange.contains(rate) {
            throw VoiceError(.invalidArgument, "sample rates must be \(Self.rateRange.lowerBound)…\(Self.rateRange.upperBound) Hz, not \(rate)")
        }
        guard (0...10).contains(quality) else {
            throw VoiceError(.invalidArgument, "resampler quality must be 0…10, not \(quality)")
        }
        var error: Int32 = 0
        guard let state = speex_resampler_init(1, UInt32(inputRate), UInt32(outputRate), Int32(quality), &error) else {
            throw VoiceError(.codecFailure, "speex_resampler_init failed: \(String(cString: speex_resampler_strerror(error)))")
        }
        speex_resampler_skip_zeros(state)
        self.state = state
        self.inputRate = inputRate
        self.outputRate = outputRate
    }

    deinit { speex_resampler_destroy(state) }

    /// Resamples the next chunk of the stream; the output may lag the input by the filter's latency.
    public func process(_ input: [Int16]) -> [Int16] {
        guard !input.isEmpty else { return [] }
        var output = [Int16](repeating: 0, count: input.count * outputRate / inputRate + 64)
        var produced = 0
        var consumed = 0
        input.withUnsafeBufferPointer { inBuffer in
            while consumed < input.count {
                if produced == output.count { output.append(contentsOf: repeatElement(0, count: 256)) }
                var inLength = UInt32(input.count - consumed)
                var outLength = UInt32(output.count - produced)
                output.withUnsafeMutableBufferPointer { outBuffer in
                    _ = speex_resampler_process_int(state, 0, inBuffer.baseAddress! + consumed, &inLength, outBuffer.baseAddress! + produced, &outLength)
                }
                consumed += Int(inLength)
                produced += Int(outLength)
            }
        }
        return Array(output[0..<produced])
    }

    /// Pushes silence through the filter to release the samples still held in it, at the end of a stream.
    public func flush() -> [Int16] {
        let latency = Int(speex_resampler_get_input_latency(state))
        let tail = process([Int16](repeating: 0, count: latency))
        return Array(tail.prefix(Int(speex_resampler_get_output_latency(state))))
    }
}
