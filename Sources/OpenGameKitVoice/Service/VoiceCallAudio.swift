import Foundation
import Logging

/// The audio of a device's two-party calls: one microphone frame read, metered and encoded for every connected call,
/// and every call's voice decoded, mixed at one volume, metered and played, each 20 ms.
///
/// Not thread-safe: ``GKVoiceChatService`` keeps it under its `Mutex`.
struct VoiceCallAudio {
    /// The meters' floor, in dB.
    static let meterFloor: Float = -120

    /// The microphone and speakers.
    let devices = VoiceAudioDevices()
    /// Whether the microphone is muted (the encoder then hears silence).
    var muted = false
    /// The other participants' volume, 0…1.
    var volume: Float = 1
    /// Whether ``inputLevel`` is measured.
    var inputMetering = false {
        didSet { inputLevel = Self.meterFloor }
    }
    /// Whether ``outputLevel`` is measured.
    var outputMetering = false {
        didSet { outputLevel = Self.meterFloor }
    }
    /// The microphone's level over the last frame, in dB.
    private(set) var inputLevel = VoiceCallAudio.meterFloor
    /// The level of the last frame played, in dB.
    private(set) var outputLevel = VoiceCallAudio.meterFloor
    private var sender: VoiceSendPipeline?
    private var receiver: VoiceReceivePipeline?
    private var mixer = VoiceMixer()
    /// The last frame played, mono, for the echo canceller.
    private var played: [Int16]?
    private let silence = [Int16](repeating: 0, count: VoiceFormat.samplesPerFrame)
    private let logger: Logger

    /// Audio that logs to `logger`.
    init(logger: Logger) {
        self.logger = logger
    }

    /// Hands a voice packet from `participantID` to the receive pipeline.
    mutating func hear(_ payload: [UInt8], from participantID: String) {
        do {
            if receiver == nil { receiver = try VoiceReceivePipeline() }
            try receiver?.receive(payload, from: participantID)
        } catch {
            logger.debug("dropped a voice packet from \(participantID): \(error)")
        }
    }

    /// Forgets a participant's audio when their call ends.
    mutating func forget(_ participantID: String) {
        receiver?.remove(participantID)
        mixer.remove(participantID)
    }

    /// Reads a microphone frame, meters it and encodes it (silence while muted); the packet to send, if any.
    mutating func talk() -> VoicePacket? {
        devices.openIfDue(logger: logger)
        guard let source = devices.source else { return nil }
        let read: VoiceFrameRead
        do {
            read = try source.readFrame()
        } catch {
            logger.warning("the microphone failed: \(error)")
            devices.microphoneFailed()
            return nil
        }
        do {
            if sender == nil { sender = try VoiceSendPipeline() }
            if case .frame(let captured) = read {
                if inputMetering { inputLevel = Self.level(captured) }
                // Muted, the encoder hears silence: the stream's clock runs on, and DTX sends next to nothing.
                return try sender?.process(muted ? silence : captured, played: played)
            } else if read == .end {
                return try sender?.finish()
            }
        } catch {
            logger.warning("voice could not be encoded: \(error)")
        }
        return nil
    }

    /// Plays 20 ms of every call, mixed at ``volume``, and meters it.
    mutating func listen() {
        guard let receiver else { return }
        var streams: [String: [Int16]] = [:]
        for (participantID, frame) in receiver.tick() {
            var settings = VoiceMixer.StreamSettings()
            settings.gain = volume
            try? mixer.set(settings, for: participantID)
            streams[participantID] = frame.samples
        }
        guard !streams.isEmpty || played != nil else { return }
        do {
            let out = try mixer.mix(streams)
            if outputMetering { outputLevel = Self.level(out) }
            if let sink = devices.sink { try sink.writeFrame(out) }
            played = stride(from: 0, to: out.count, by: 2).map { Int16((Int32(out[$0]) + Int32(out[$0 + 1])) / 2) }
        } catch {
            logger.warning("the speakers failed: \(error)")
            devices.speakersFailed()
        }
    }

    /// Lets go of the pipelines and resets the meters: the last call ended.
    mutating func reset() {
        sender = nil
        receiver = nil
        played = nil
        inputLevel = Self.meterFloor
        outputLevel = Self.meterFloor
    }

    /// The RMS level of `samples` in dB below full scale, no lower than ``meterFloor``.
    static func level(_ samples: [Int16]) -> Float {
        guard !samples.isEmpty else { return meterFloor }
        var sum: Double = 0
        for sample in samples { sum += Double(sample) * Double(sample) }
        let rms = (sum / Double(samples.count)).squareRoot() / 32_768
        return max(meterFloor, Float(20 * log10(max(rms, 1e-9))))
    }
}
