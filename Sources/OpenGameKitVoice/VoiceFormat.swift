/// The engine's fixed audio format: 48 kHz, 20 ms frames.
///
/// Sources deliver mono frames of ``samplesPerFrame`` samples; sinks take interleaved stereo frames of
/// ``stereoSamplesPerFrame`` samples. Packet timestamps count frames.
public enum VoiceFormat {
    /// The sample rate of every frame, in Hz.
    public static let sampleRate = 48_000
    /// The length of a frame in milliseconds.
    public static let frameMilliseconds = 20
    /// Samples in one mono frame (960).
    public static let samplesPerFrame = sampleRate * frameMilliseconds / 1000
    /// Samples in one interleaved stereo frame (1920).
    public static let stereoSamplesPerFrame = samplesPerFrame * 2
    /// The block speexdsp's echo canceller and preprocessor work in: 10 ms (two per frame). The preprocessor delays
    /// what it cleans by one block, so a 10 ms block saves 10 ms of mouth-to-ear over a whole frame.
    package static let samplesPerProcessingBlock = samplesPerFrame / 2
}
