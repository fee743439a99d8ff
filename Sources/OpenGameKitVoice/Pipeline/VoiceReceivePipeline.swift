/// Turns the voice packets of several senders into one 20 ms mono frame per sender per tick: a jitter buffer
/// and an Opus decoder each, with loss concealment and FEC recovery.
///
/// Call ``receive(_:from:)-([UInt8],_)`` (or its ``VoicePacket`` form) as packets arrive and ``tick()`` every 20 ms
/// of playback. Holds at most ``maxSenders`` senders.
/// `@unchecked Sendable`: not thread-safe (decoder state): one owner at a time; it is Sendable only to move between threads.
public final class VoiceReceivePipeline: @unchecked Sendable {
    /// One sender's audio for a tick.
    public struct Frame: Sendable, Equatable {
        /// 960 samples, 48 kHz mono.
        public var samples: [Int16]
        /// Whether the sender is speaking, from the flag of the last packet played.
        public var speaking: Bool
    }

    private struct Stream {
        var jitter: VoiceJitterBuffer
        let decoder: OpusVoiceDecoder
        var speaking = false
    }

    /// The most senders held at once.
    public let maxSenders: Int
    private let jitterConfiguration: VoiceJitterBuffer.Configuration
    private var streams: [String: Stream] = [:]
    private let silence = [Int16](repeating: 0, count: VoiceFormat.samplesPerFrame)

    /// Creates a pipeline for up to `maxSenders` senders (1…256).
    public init(maxSenders: Int = 32, jitter: VoiceJitterBuffer.Configuration = .init()) throws(VoiceError) {
        guard (1...256).contains(maxSenders) else {
            throw VoiceError(.invalidArgument, "a receive pipeline holds 1…256 senders, not \(maxSenders)")
        }
        _ = try VoiceJitterBuffer(jitter)
        self.maxSenders = maxSenders
        jitterConfiguration = jitter
    }

    /// The senders heard so far and not removed.
    public var senders: [String] { Array(streams.keys) }

    /// Takes a packet's wire bytes from `sender`; malformed bytes throw ``VoiceError/Code/malformedPacket``.
    public func receive(_ bytes: [UInt8], from sender: String) throws(VoiceError) {
        try receive(VoicePacket(bytes: bytes), from: sender)
    }

    /// Takes a parsed packet from `sender`; a new sender beyond ``maxSenders`` throws.
    public func receive(_ packet: VoicePacket, from sender: String) throws(VoiceError) {
        if streams[sender] == nil {
            guard streams.count < maxSenders else {
                throw VoiceError(.invalidArgument, "sender \(sender) would be one more than the \(maxSenders) senders allowed; remove one first")
            }
            streams[sender] = Stream(jitter: try VoiceJitterBuffer(jitterConfiguration), decoder: try OpusVoiceDecoder())
        }
        streams[sender]!.jitter.put(packet)
    }

    /// Forgets a sender that left.
    public func remove(_ sender: String) { streams[sender] = nil }

    /// The jitter buffer counters for `sender`.
    public func statistics(for sender: String) -> VoiceJitterBuffer.Statistics? { streams[sender]?.jitter.statistics }

    /// The jitter buffer's current delay for `sender`, in frames.
    public func delay(for sender: String) -> Int? { streams[sender]?.jitter.delay }

    /// Plays 20 ms: one frame per sender (silence while a sender's buffer fills).
    public func tick() -> [String: Frame] {
        var frames: [String: Frame] = [:]
        for sender in Array(streams.keys) {
            guard var stream = streams[sender] else { continue }
            let samples: [Int16]
            switch stream.jitter.pop() {
            case .packet(let packet):
                samples = (try? stream.decoder.decode(packet.opus)) ?? stream.decoder.conceal()
                stream.speaking = packet.speaking
            case .missing(let next):
                samples = next.map { stream.decoder.recover(fromNext: $0.opus) } ?? stream.decoder.conceal()
            case .silence:
                // Opus fills DTX gaps itself: decoding "no packet" after a DTX frame gives its comfort noise.
                samples = stream.decoder.conceal()
                stream.speaking = false
            case .buffering:
                samples = silence
                stream.speaking = false
            }
            frames[sender] = Frame(samples: samples, speaking: stream.speaking)
            streams[sender] = stream
        }
        return frames
    }
}
