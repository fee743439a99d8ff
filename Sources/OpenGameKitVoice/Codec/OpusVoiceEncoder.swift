import COpus

/// Encodes 20 ms frames of 48 kHz mono speech to Opus (OPUS_APPLICATION_VOIP), with in-band FEC on.
///
/// Owns a libopus encoder, freed on deinit.
/// `@unchecked Sendable`: not thread-safe (C state): one owner at a time; it is Sendable only to move between threads.
public final class OpusVoiceEncoder: @unchecked Sendable {
    /// Bitrates libopus accepts, in bits per second.
    public static let bitrateRange = 6_000...510_000
    /// Complexities libopus accepts: more spends more CPU on a better encoding.
    public static let complexityRange = 0...10

    private let encoder: OpaquePointer
    private var output = [UInt8](repeating: 0, count: VoicePacket.maxOpusLength)

    /// The target bitrate in bits per second.
    public private(set) var bitrate: Int

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - bitrate: bits per second, 6,000…510,000.
    ///   - expectedPacketLoss: percent, 0…100; Opus spends FEC bits in proportion (at 0 it sends no FEC).
    ///   - fec: whether to carry in-band FEC (a coarse copy of each frame inside the next packet).
    ///   - dtx: whether silent frames become 1–2 byte packets that need not be sent.
    ///   - complexity: 0…10, CPU spent per frame against quality (libopus's own default is 10).
    public init(bitrate: Int = 24_000, expectedPacketLoss: Int = 10, fec: Bool = true, dtx: Bool = true, complexity: Int = 10) throws(VoiceError) {
        guard Self.bitrateRange.contains(bitrate) else {
            throw VoiceError(.invalidArgument, "Opus bitrate must be \(Self.bitrateRange.lowerBound)…\(Self.bitrateRange.upperBound) bit/s, not \(bitrate)")
        }
        guard (0...100).contains(expectedPacketLoss) else {
            throw VoiceError(.invalidArgument, "expected packet loss must be 0…100 percent, not \(expectedPacketLoss)")
        }
        guard Self.complexityRange.contains(complexity) else {
            throw VoiceError(
                .invalidArgument, "Opus complexity must be \(Self.complexityRange.lowerBound)…\(Self.complexityRange.upperBound), not \(complexity)")
        }
        var error: Int32 = 0
        guard let encoder = opus_encoder_create(Int32(VoiceFormat.sampleRate), 1, OPUS_APPLICATION_VOIP, &error), error == OPUS_OK else {
            throw VoiceError(.codecFailure, "opus_encoder_create failed: \(String(cString: opus_strerror(error)))")
        }
        self.encoder = encoder
        self.bitrate = bitrate
        try apply(OPUS_SET_BITRATE_REQUEST, bitrate, "bitrate")
        try apply(OPUS_SET_INBAND_FEC_REQUEST, fec ? 1 : 0, "in-band FEC")
        try apply(OPUS_SET_PACKET_LOSS_PERC_REQUEST, expectedPacketLoss, "expected packet loss")
        try apply(OPUS_SET_DTX_REQUEST, dtx ? 1 : 0, "DTX")
        try apply(OPUS_SET_SIGNAL_REQUEST, Int(OPUS_SIGNAL_VOICE), "signal type")
        try apply(OPUS_SET_COMPLEXITY_REQUEST, complexity, "complexity")
    }

    deinit { opus_encoder_destroy(encoder) }

    /// Sets the target bitrate in bits per second (6,000…510,000).
    public func setBitrate(_ bitsPerSecond: Int) throws(VoiceError) {
        guard Self.bitrateRange.contains(bitsPerSecond) else {
            throw VoiceError(
                .invalidArgument, "Opus bitrate must be \(Self.bitrateRange.lowerBound)…\(Self.bitrateRange.upperBound) bit/s, not \(bitsPerSecond)")
        }
        try apply(OPUS_SET_BITRATE_REQUEST, bitsPerSecond, "bitrate")
        bitrate = bitsPerSecond
    }

    /// Sets the packet loss the network is expected to have, in percent (0…100); FEC grows with it.
    public func setExpectedPacketLoss(_ percent: Int) throws(VoiceError) {
        guard (0...100).contains(percent) else {
            throw VoiceError(.invalidArgument, "expected packet loss must be 0…100 percent, not \(percent)")
        }
        try apply(OPUS_SET_PACKET_LOSS_PERC_REQUEST, percent, "expected packet loss")
    }

    /// Turns discontinuous transmission on or off.
    public func setDTX(_ on: Bool) throws(VoiceError) {
        try apply(OPUS_SET_DTX_REQUEST, on ? 1 : 0, "DTX")
    }

    /// The encoder's look-ahead in 48 kHz samples: how far its output lags its input (the Ogg pre-skip).
    public var lookahead: Int {
        var value: Int32 = 0
        _ = ogk_opus_encoder_get(encoder, OPUS_GET_LOOKAHEAD_REQUEST, &value)
        return Int(value)
    }

    /// Encodes one frame of exactly 960 samples.
    ///
    /// The result is 1…1275 bytes. With DTX on, a result of 2 bytes or fewer is a silent frame that need not be sent.
    public func encode(_ frame: [Int16]) throws(VoiceError) -> [UInt8] {
        guard frame.count == VoiceFormat.samplesPerFrame else {
            throw VoiceError(.invalidArgument, "an Opus voice frame is \(VoiceFormat.samplesPerFrame) samples (20 ms at 48 kHz), not \(frame.count)")
        }
        let length = frame.withUnsafeBufferPointer { pcm in
            output.withUnsafeMutableBufferPointer { out in
                opus_encode(encoder, pcm.baseAddress!, Int32(VoiceFormat.samplesPerFrame), out.baseAddress!, Int32(out.count))
            }
        }
        guard length > 0 else {
            throw VoiceError(.codecFailure, "opus_encode failed: \(String(cString: opus_strerror(length)))")
        }
        return Array(output[0..<Int(length)])
    }

    private func apply(_ request: Int32, _ value: Int, _ what: String) throws(VoiceError) {
        let status = ogk_opus_encoder_set(encoder, request, Int32(value))
        guard status == OPUS_OK else {
            throw VoiceError(.codecFailure, "Opus refused \(what) \(value): \(String(cString: opus_strerror(status)))")
        }
    }
}
