import COpus

/// Decodes Opus packets of 20 ms frames to 48 kHz mono, conceals lost frames, and recovers them from FEC.
///
/// Owns a libopus decoder, freed on deinit.
/// `@unchecked Sendable`: not thread-safe (C state): one owner at a time; it is Sendable only to move between threads.
public final class OpusVoiceDecoder: @unchecked Sendable {
    private let decoder: OpaquePointer
    private var pcm = [Int16](repeating: 0, count: VoiceFormat.samplesPerFrame)

    /// Creates a decoder for 48 kHz mono.
    public init() throws(VoiceError) {
        var error: Int32 = 0
        guard let decoder = opus_decoder_create(Int32(VoiceFormat.sampleRate), 1, &error), error == OPUS_OK else {
            throw VoiceError(.codecFailure, "opus_decoder_create failed: \(String(cString: opus_strerror(error)))")
        }
        self.decoder = decoder
    }

    deinit { opus_decoder_destroy(decoder) }

    /// Decodes one packet of a 20 ms frame to 960 samples.
    ///
    /// A packet that is not valid Opus, or that holds more or less than 20 ms, throws ``VoiceError/Code/malformedPacket``;
    /// the caller should then ``conceal()`` the frame.
    public func decode(_ packet: [UInt8]) throws(VoiceError) -> [Int16] {
        guard !packet.isEmpty, packet.count <= VoicePacket.maxOpusLength else {
            throw VoiceError(.malformedPacket, "an Opus packet holds 1…\(VoicePacket.maxOpusLength) bytes, not \(packet.count)")
        }
        let samples = packet.withUnsafeBufferPointer { opus_packet_get_nb_samples($0.baseAddress!, Int32($0.count), Int32(VoiceFormat.sampleRate)) }
        guard samples == Int32(VoiceFormat.samplesPerFrame) else {
            let what = samples < 0 ? String(cString: opus_strerror(samples)) : "\(samples) samples"
            throw VoiceError(.malformedPacket, "a voice packet must hold one 20 ms Opus frame (\(VoiceFormat.samplesPerFrame) samples), not \(what)")
        }
        return try run(packet, fec: false)
    }

    /// Produces 960 samples for a lost frame by packet loss concealment.
    public func conceal() -> [Int16] {
        (try? run(nil, fec: false)) ?? [Int16](repeating: 0, count: VoiceFormat.samplesPerFrame)
    }

    /// Rebuilds a lost frame from the FEC data in the packet that follows it, or conceals it if that packet has none.
    ///
    /// Decode `next` itself afterwards, in its turn. A malformed `next` gives concealment, never an error.
    public func recover(fromNext next: [UInt8]) -> [Int16] {
        guard !next.isEmpty, next.count <= VoicePacket.maxOpusLength,
            next.withUnsafeBufferPointer({ opus_packet_get_nb_samples($0.baseAddress!, Int32($0.count), Int32(VoiceFormat.sampleRate)) })
                == Int32(VoiceFormat.samplesPerFrame),
            let frame = try? run(next, fec: true)
        else { return conceal() }
        return frame
    }

    private func run(_ packet: [UInt8]?, fec: Bool) throws(VoiceError) -> [Int16] {
        let count = pcm.withUnsafeMutableBufferPointer { out in
            if let packet {
                packet.withUnsafeBufferPointer {
                    opus_decode(decoder, $0.baseAddress, Int32($0.count), out.baseAddress!, Int32(out.count), fec ? 1 : 0)
                }
            } else {
                opus_decode(decoder, nil, 0, out.baseAddress!, Int32(out.count), 0)
            }
        }
        guard count == Int32(VoiceFormat.samplesPerFrame) else {
            throw VoiceError(.malformedPacket, "Opus could not decode the packet: \(count < 0 ? String(cString: opus_strerror(count)) : "\(count) samples")")
        }
        return pcm
    }
}
