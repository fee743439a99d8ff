import Logging

/// A device's audio, one for match voice (``VoiceChatEngine``) and two-party calls (``VoiceCallAudio``) alike: the
/// microphone and speakers, the send pipeline (fed the frame last played, for its echo canceller), and the mixer that
/// plays every stream heard. Its owner calls it every 20 ms from a ``VoiceFrameClock`` and decides what is sent where
/// and which streams are heard; failures are logged here, and a device that fails is looked for again.
///
/// Not thread-safe: its owner keeps it under its own `Mutex`.
struct VoiceAudioEngine {
    /// The microphone and speakers.
    let devices = VoiceAudioDevices()
    private var sender: VoiceSendPipeline?
    private var mixer = VoiceMixer()
    /// Whether anything was mixed yet: from then on every tick plays (silence included), so the speakers' stream stays
    /// fed and the meters fall back when voices stop.
    private var mixing = false
    /// The last frame played, mono, for the echo canceller.
    private var played: [Int16]?
    /// Whether the send pipeline's clock moved on the last tick (a frame encoded, or a talk spurt ended).
    private var clockMoved = true
    private let logger: Logger

    /// An engine that logs to `logger`.
    init(logger: Logger) {
        self.logger = logger
    }

    /// Reads one microphone frame, opening the system's devices when due; nil without a microphone or when it failed.
    /// Starts a tick: when the last one encoded nothing, its 20 ms still pass for the send pipeline
    /// (``VoiceSendPipeline/skip()``).
    mutating func readMicrophone() -> VoiceFrameRead? {
        if !clockMoved { sender?.skip() }
        clockMoved = false
        devices.openIfDue(logger: logger)
        guard let source = devices.source else { return nil }
        do {
            return try source.readFrame()
        } catch {
            logger.warning("the microphone failed: \(error)")
            devices.microphoneFailed()
            return nil
        }
    }

    /// Encodes one captured frame; the packet to send, or nil when the encoder sends nothing (silence under DTX) or
    /// failed.
    mutating func encode(_ frame: [Int16]) -> VoicePacket? {
        do {
            if sender == nil { sender = try VoiceSendPipeline() }
            let packet = try sender?.process(frame, played: played)
            clockMoved = true
            return packet
        } catch {
            logger.warning("voice could not be encoded: \(error)")
            return nil
        }
    }

    /// Ends the talk spurt under way: the packet flagged silent that tells listeners at once, or nil when none was.
    mutating func endTalkSpurt() -> VoicePacket? {
        do {
            let packet = try sender?.finish()
            if packet != nil { clockMoved = true }
            return packet
        } catch {
            logger.warning("voice could not be encoded: \(error)")
            return nil
        }
    }

    /// Mixes one 20 ms frame of each stream heard (keyed by the owner's stream names, each with its volume, pan and
    /// mute) and plays it; the stereo frame mixed, or nil when nothing was heard yet.
    mutating func play(_ streams: [String: (samples: [Int16], settings: VoiceMixer.StreamSettings)]) -> [Int16]? {
        guard !streams.isEmpty || mixing else { return nil }
        mixing = true
        var frames: [String: [Int16]] = [:]
        for (key, stream) in streams {
            try? mixer.set(stream.settings, for: key)
            frames[key] = stream.samples
        }
        do {
            let out = try mixer.mix(frames)
            if let sink = devices.sink {
                try sink.writeFrame(out)
                played = stride(from: 0, to: out.count, by: 2).map { Int16((Int32(out[$0]) + Int32(out[$0 + 1])) / 2) }
            }
            return out
        } catch {
            logger.warning("the speakers failed: \(error)")
            devices.speakersFailed()
            played = nil
            return nil
        }
    }

    /// Forgets a stream's mix settings (its speaker left).
    mutating func forget(_ stream: String) {
        mixer.remove(stream)
    }

    /// Lets go of the send pipeline and of what was played: nothing is heard or said any more.
    mutating func reset() {
        sender = nil
        played = nil
        mixing = false
        clockMoved = true
    }
}
