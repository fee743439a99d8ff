import CSpeexDSP
import Foundation

/// Cleans up captured speech before encoding: noise suppression and automatic gain (speexdsp's preprocessor),
/// and voice activity detection.
///
/// Voice activity comes from ``VADMode/energy`` by default: an energy gate with a hangover on the cleaned
/// frame. On espeak speech with pauses and −50 dBFS noise it found 99 % of speech frames and left 96 % of pause
/// frames silent, where speex's detector found 100 % but left only 69 % silent (ProcessingTests).
/// Owns C state, freed on deinit.
/// `@unchecked Sendable`: not thread-safe (C state): one owner at a time; it is Sendable only to move between threads.
public final class VoicePreprocessor: @unchecked Sendable {
    /// How speech is told from silence.
    public enum VADMode: Sendable, Equatable {
        /// Speex's probability-based detector (`SPEEX_PREPROCESS_SET_VAD`); speexdsp 1.2 itself warns that it is
        /// "a hack pending a complete rewrite", and it marked about a third of the pauses as speech in our measurement.
        case speex
        /// Frame energy above an adaptive noise floor, held for a hangover after the last loud frame.
        case energy
    }

    /// Settings of the preprocessor.
    public struct Configuration: Sendable, Equatable {
        /// Whether to suppress stationary noise.
        public var noiseSuppression = true
        /// The most noise is attenuated by, in dB (a negative number, −60…−1).
        public var noiseSuppressionDecibels = -30
        /// Whether to level the voice automatically.
        public var automaticGain = true
        /// The level automatic gain aims for, in Int16 units (1…32767).
        ///
        /// speexdsp measures a perceptual loudness, not RMS: its default of 8,000 left espeak speech 13 dB quieter
        /// than it came in (−34.7 against −21.8 dBFS); 30,000 (Mumble's target too) keeps it near its input level.
        public var automaticGainLevel: Float = 30_000
        /// The voice activity detector.
        public var vad: VADMode = .energy
        /// For ``VADMode/energy``: how far above the noise floor a frame must be to count as speech, in dB.
        public var energyThresholdDecibels: Float = 12
        /// For ``VADMode/energy``: the quietest frame that can count as speech, in dBFS.
        public var energyFloorDecibels: Float = -55
        /// For ``VADMode/energy``: frames that stay "speaking" after the last loud one (bridges pauses between words).
        public var hangoverFrames = 15

        /// The default settings.
        public init() {}
    }

    /// The result of processing one frame.
    public struct Result: Sendable, Equatable {
        /// The cleaned frame, 960 samples.
        public var frame: [Int16]
        /// Whether the frame holds speech.
        public var speaking: Bool
        /// The cleaned frame's level in dBFS.
        public var levelDecibels: Float
    }

    private let state: OpaquePointer
    private let echoCanceller: EchoCanceller?
    /// The settings in use.
    public let configuration: Configuration
    private var noiseFloor: Float = -90
    private var hangover = 0
    /// Whether automatic gain is paused because the far end is playing (see ``process(_:played:)``).
    private var gainHeld = false
    /// The far end's level (dBFS) above which automatic gain holds still.
    static let farEndHoldDecibels: Float = -50

    /// Creates a preprocessor; if `echoCanceller` is given, the residual echo it leaves is suppressed too.
    public init(_ configuration: Configuration = .init(), echoCanceller: EchoCanceller? = nil) throws(VoiceError) {
        guard (-60 ... -1).contains(configuration.noiseSuppressionDecibels) else {
            throw VoiceError(.invalidArgument, "noise suppression must be −60…−1 dB, not \(configuration.noiseSuppressionDecibels)")
        }
        guard (1...32767).contains(configuration.automaticGainLevel) else {
            throw VoiceError(.invalidArgument, "automatic gain level must be 1…32767, not \(configuration.automaticGainLevel)")
        }
        guard configuration.hangoverFrames >= 0 else {
            throw VoiceError(.invalidArgument, "VAD hangover must be 0 or more frames, not \(configuration.hangoverFrames)")
        }
        guard let state = speex_preprocess_state_init(Int32(VoiceFormat.samplesPerProcessingBlock), Int32(VoiceFormat.sampleRate)) else {
            throw VoiceError(.codecFailure, "speex_preprocess_state_init failed")
        }
        self.state = state
        self.configuration = configuration
        self.echoCanceller = echoCanceller
        var denoise: Int32 = configuration.noiseSuppression ? 1 : 0
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_DENOISE, &denoise)
        var suppress = Int32(configuration.noiseSuppressionDecibels)
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &suppress)
        var agc: Int32 = configuration.automaticGain ? 1 : 0
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_AGC, &agc)
        var level = configuration.automaticGainLevel
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_AGC_LEVEL, &level)
        // At most 12 dB of gain (speexdsp allows 30): more lifts the echo canceller's residue over the voice
        // activity threshold, and the far end hears itself.
        var maxGain: Int32 = 12
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_AGC_MAX_GAIN, &maxGain)
        if configuration.vad == .speex {
            // Off by default; setting it at all makes speexdsp print "The VAD has been replaced by a hack…" to stderr.
            var vad: Int32 = 1
            speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_VAD, &vad)
        }
        if let echoCanceller {
            speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(echoCanceller.state))
        }
    }

    deinit { speex_preprocess_state_destroy(state) }

    /// Cleans one 960-sample frame and decides whether it holds speech.
    ///
    /// With `played` (what the speakers played meanwhile) and an echo canceller, each block is echo-cancelled just
    /// before it is cleaned, as speexdsp needs: the preprocessor suppresses the residual echo of the block the
    /// canceller processed last. While the far end plays (its block above −50 dBFS), automatic gain
    /// holds still: it neither adapts to nor lifts what is left of the echo, which the voice activity detector would
    /// otherwise take for speech.
    public func process(_ frame: [Int16], played: [Int16]? = nil) throws(VoiceError) -> Result {
        guard frame.count == VoiceFormat.samplesPerFrame else {
            throw VoiceError(.invalidArgument, "a preprocessor frame is \(VoiceFormat.samplesPerFrame) samples (20 ms at 48 kHz), not \(frame.count)")
        }
        if let played, played.count != VoiceFormat.samplesPerFrame {
            throw VoiceError(.invalidArgument, "the played frame must be \(VoiceFormat.samplesPerFrame) samples (20 ms at 48 kHz), not \(played.count)")
        }
        var cleaned = frame
        let block = VoiceFormat.samplesPerProcessingBlock
        let echo = played.flatMap { played in echoCanceller.map { ($0, played) } }
        let speexVoice = cleaned.withUnsafeMutableBufferPointer { samples in
            stride(from: 0, to: VoiceFormat.samplesPerFrame, by: block).map { start in
                if let (canceller, played) = echo {
                    frame.withUnsafeBufferPointer { captured in
                        played.withUnsafeBufferPointer {
                            canceller.cancel(block: captured.baseAddress! + start, played: $0.baseAddress! + start, into: samples.baseAddress! + start)
                        }
                    }
                    holdGain(Self.decibels(played[start..<start + block]) > Self.farEndHoldDecibels)
                }
                return speex_preprocess_run(state, samples.baseAddress! + start) != 0
            }
        }.contains(true)
        let level = Self.decibels(cleaned)
        let speaking: Bool
        switch configuration.vad {
        case .speex:
            speaking = speexVoice
        case .energy:
            speaking = energyDecision(level)
        }
        return Result(frame: cleaned, speaking: speaking, levelDecibels: level)
    }

    private func holdGain(_ hold: Bool) {
        guard configuration.automaticGain, hold != gainHeld else { return }
        gainHeld = hold
        var agc: Int32 = hold ? 0 : 1
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_AGC, &agc)
    }

    /// Forgets the hangover: the next frame counts as speech only if it is loud itself (a talk spurt was cut short).
    public func endSpeech() { hangover = 0 }

    private func energyDecision(_ level: Float) -> Bool {
        // The floor falls at once to a quieter frame and rises slowly (about 3 dB a second), so it follows
        // the noise between words without climbing onto the speech.
        noiseFloor = level < noiseFloor ? level : noiseFloor + 0.06
        if level > max(noiseFloor + configuration.energyThresholdDecibels, configuration.energyFloorDecibels) {
            hangover = configuration.hangoverFrames + 1
        }
        if hangover > 0 { hangover -= 1; return true }
        return false
    }

    /// The RMS level of `frame` in dBFS (−100 for digital silence).
    static func decibels(_ frame: some Collection<Int16>) -> Float {
        var sum: Double = 0
        for s in frame { sum += Double(s) * Double(s) }
        let rms = (sum / Double(max(frame.count, 1))).squareRoot() / 32768
        return rms > 1e-5 ? Float(20 * log10(rms)) : -100
    }
}
