/// Turns captured 20 ms frames into voice packets: echo cancellation (when a playback reference is given),
/// noise suppression and gain, voice activity detection, and Opus encoding with FEC and DTX.
///
/// While the detector hears no speech the frame is gated to silence, so Opus DTX takes over: most silent
/// frames give no packet (``process(_:played:)`` returns nil) and a sparse keep-alive packet follows about
/// every 400 ms. Timestamps still advance for frames not sent. Give a playback reference with every frame or
/// with none.
/// `@unchecked Sendable`: not thread-safe (codec and DSP state): one owner at a time; it is Sendable only to move between threads.
public final class VoiceSendPipeline: @unchecked Sendable {
    /// Settings of the pipeline.
    public struct Configuration: Sendable, Equatable {
        /// Opus bitrate in bits per second.
        public var bitrate = 24_000
        /// Expected packet loss in percent; drives how much FEC Opus sends.
        public var expectedPacketLoss = 10
        /// In-band forward error correction.
        public var fec = true
        /// Discontinuous transmission: send (almost) nothing while silent.
        public var dtx = true
        /// Opus encoder complexity, 0…10: CPU per frame against quality.
        public var complexity = 10
        /// Cancel the echo of the playback reference, when one is given.
        public var echoCancellation = true
        /// Noise suppression, gain and voice activity settings.
        public var preprocessing = VoicePreprocessor.Configuration()

        /// The defaults: 24 kbit/s, 10 % expected loss, FEC, DTX and echo cancellation on.
        public init() {}
    }

    private let encoder: OpusVoiceEncoder
    private let preprocessor: VoicePreprocessor
    private var sequence: UInt16 = 0
    private var timestamp: UInt32 = 0
    private let silence = [Int16](repeating: 0, count: VoiceFormat.samplesPerFrame)

    /// The settings in use.
    public let configuration: Configuration
    /// Frames processed so far.
    public private(set) var framesProcessed = 0
    /// Packets produced so far.
    public private(set) var packetsSent = 0
    /// Whether the last frame held speech.
    public private(set) var speaking = false

    /// Creates a pipeline.
    public init(_ configuration: Configuration = .init()) throws(VoiceError) {
        self.configuration = configuration
        encoder = try OpusVoiceEncoder(
            bitrate: configuration.bitrate, expectedPacketLoss: configuration.expectedPacketLoss, fec: configuration.fec, dtx: configuration.dtx,
            complexity: configuration.complexity)
        preprocessor = try VoicePreprocessor(configuration.preprocessing, echoCanceller: configuration.echoCancellation ? try EchoCanceller() : nil)
    }

    /// The encoder's look-ahead in 48 kHz samples.
    public var codecDelay: Int { encoder.lookahead }

    /// Processes one captured 960-sample frame, with the frame played on the speakers meanwhile if known;
    /// returns the packet to send, or nil when DTX sends nothing.
    public func process(_ captured: [Int16], played reference: [Int16]? = nil) throws(VoiceError) -> VoicePacket? {
        let cleaned = try preprocessor.process(captured, played: reference)
        let wasSpeaking = speaking
        speaking = cleaned.speaking
        let opus = try encoder.encode(cleaned.speaking ? cleaned.frame : silence)
        framesProcessed += 1
        defer { timestamp &+= 1 }
        // DTX packets (1–2 bytes) are sent while speaking and on the first silent frame, so a gap in the stream
        // always follows a packet flagged silent, and the receiver plays it as silence, not as loss.
        if configuration.dtx, opus.count <= 2, !cleaned.speaking, !wasSpeaking { return nil }
        let packet = try VoicePacket(speaking: cleaned.speaking, sequence: sequence, timestamp: timestamp, opus: opus)
        sequence &+= 1
        packetsSent += 1
        return packet
    }

    /// Passes a 20 ms tick on which no frame was captured (the microphone paused: a game's engine stopped pushing
    /// samples, or no microphone is open) or the frame captured went to no one (push-to-talk released): the stream's
    /// clock runs on, so the next packet carries the time it is said at and listeners play it at once. Without this a
    /// listener, whose clock never paused, would find every later packet past its turn.
    public func skip() {
        timestamp &+= 1
    }

    /// Ends a talk spurt cut short — push-to-talk released, the channel made inactive or stopped: returns one silent
    /// frame flagged silent when the last frame was speech (nil otherwise), so receivers fall silent at once instead
    /// of concealing a stream that stopped mid-word, and forgets the detector's hangover.
    public func finish() throws(VoiceError) -> VoicePacket? {
        guard speaking else { return nil }
        speaking = false
        preprocessor.endSpeech()
        let opus = try encoder.encode(silence)
        defer { timestamp &+= 1 }
        let packet = try VoicePacket(speaking: false, sequence: sequence, timestamp: timestamp, opus: opus)
        sequence &+= 1
        packetsSent += 1
        return packet
    }
}
