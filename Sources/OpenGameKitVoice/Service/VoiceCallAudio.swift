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
    var devices: VoiceAudioDevices { engine.devices }
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
    private var engine: VoiceAudioEngine
    private var receiver: VoiceReceivePipeline?
    private let silence = [Int16](repeating: 0, count: VoiceFormat.samplesPerFrame)
    private let logger: Logger

    /// Audio that logs to `logger`.
    init(logger: Logger) {
        self.logger = logger
        engine = VoiceAudioEngine(logger: logger)
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
        engine.forget(participantID)
    }

    /// Reads a microphone frame, meters it and encodes it (silence while muted); the packet to send, if any.
    mutating func talk() -> VoicePacket? {
        switch engine.readMicrophone() {
        case .frame(let captured):
            if inputMetering { inputLevel = Self.level(captured) }
            // Muted, the encoder hears silence: the stream's clock runs on, and DTX sends next to nothing.
            return engine.encode(muted ? silence : captured)
        case .end: return engine.endTalkSpurt()
        case .pending, nil: return nil
        }
    }

    /// Plays 20 ms of every call, mixed at ``volume``, and meters it.
    mutating func listen() {
        guard let receiver else { return }
        var settings = VoiceMixer.StreamSettings()
        settings.gain = volume
        var streams: [String: (samples: [Int16], settings: VoiceMixer.StreamSettings)] = [:]
        for (participantID, frame) in receiver.tick() { streams[participantID] = (frame.samples, settings) }
        if let out = engine.play(streams), outputMetering { outputLevel = Self.level(out) }
    }

    /// Lets go of the pipelines and resets the meters: the last call ended.
    mutating func reset() {
        engine.reset()
        receiver = nil
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
