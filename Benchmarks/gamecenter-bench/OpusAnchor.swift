import Foundation
import ArgumentParser
import COpus
import OpenGameKitVoice

/// The voice bench's anchor: libopus called directly, with nothing around it — every frame encoded (48 kHz mono,
/// 20 ms, `OPUS_APPLICATION_VOIP`, the send pipeline's bitrate, FEC, expected loss and DTX), then every packet
/// decoded, each loop timed in CPU time of the one thread that runs it.
enum OpusAnchor {
    /// CPU per frame of each loop.
    struct Figures {
        /// CPU µs per 20 ms frame encoded.
        var encodeMicroseconds: Double
        /// CPU µs per packet decoded.
        var decodeMicroseconds: Double
        /// Mean encoded size in bytes.
        var meanBytes: Double
        /// The decoded speech against the input, aligned by the encoder's look-ahead: the log-spectral distance in dB
        /// over the 10 ms blocks that hold speech (lower is closer; Opus does not keep the waveform, so a
        /// signal-to-noise ratio would say little).
        var spectralDistanceDecibels: Double
    }

    /// Encodes `frames` with the settings of `configuration`, then decodes every packet.
    static func measure(frames: [[Int16]], configuration: VoiceSendPipeline.Configuration = .init()) throws -> Figures {
        var error: Int32 = 0
        guard let encoder = opus_encoder_create(Int32(VoiceFormat.sampleRate), 1, OPUS_APPLICATION_VOIP, &error), error == OPUS_OK else {
            throw ValidationError("opus_encoder_create failed: \(error)")
        }
        defer { opus_encoder_destroy(encoder) }
        guard let decoder = opus_decoder_create(Int32(VoiceFormat.sampleRate), 1, &error), error == OPUS_OK else {
            throw ValidationError("opus_decoder_create failed: \(error)")
        }
        defer { opus_decoder_destroy(decoder) }
        for (request, value) in [
            (OPUS_SET_BITRATE_REQUEST, configuration.bitrate), (OPUS_SET_INBAND_FEC_REQUEST, configuration.fec ? 1 : 0),
            (OPUS_SET_PACKET_LOSS_PERC_REQUEST, configuration.expectedPacketLoss), (OPUS_SET_DTX_REQUEST, configuration.dtx ? 1 : 0),
            (OPUS_SET_SIGNAL_REQUEST, Int(OPUS_SIGNAL_VOICE)), (OPUS_SET_COMPLEXITY_REQUEST, configuration.complexity),
        ] {
            guard ogk_opus_encoder_set(encoder, request, Int32(value)) == OPUS_OK else { throw ValidationError("Opus refused request \(request) = \(value)") }
        }

        let samples = Int32(VoiceFormat.samplesPerFrame)
        var output = [UInt8](repeating: 0, count: VoicePacket.maxOpusLength)
        var packets: [[UInt8]] = []
        packets.reserveCapacity(frames.count)
        let encodeStart = ThreadClock.seconds()
        for frame in frames {
            let length = frame.withUnsafeBufferPointer { pcm in
                output.withUnsafeMutableBufferPointer { opus_encode(encoder, pcm.baseAddress!, samples, $0.baseAddress!, Int32($0.count)) }
            }
            guard length > 0 else { throw ValidationError("opus_encode failed: \(length)") }
            packets.append(Array(output[0..<Int(length)]))
        }
        let encodeSeconds = ThreadClock.seconds() - encodeStart

        var lookahead: Int32 = 0
        _ = ogk_opus_encoder_get(encoder, OPUS_GET_LOOKAHEAD_REQUEST, &lookahead)
        var decoded = [Int16](repeating: 0, count: frames.count * VoiceFormat.samplesPerFrame)
        let decodeStart = ThreadClock.seconds()
        for (index, packet) in packets.enumerated() {
            let count = packet.withUnsafeBufferPointer { packet in
                decoded.withUnsafeMutableBufferPointer {
                    opus_decode(decoder, packet.baseAddress, Int32(packet.count), $0.baseAddress! + index * Int(samples), samples, 0)
                }
            }
            guard count == samples else { throw ValidationError("opus_decode failed: \(count)") }
        }
        let decodeSeconds = ThreadClock.seconds() - decodeStart
        return Figures(
            encodeMicroseconds: encodeSeconds / Double(frames.count) * 1e6,
            decodeMicroseconds: decodeSeconds / Double(packets.count) * 1e6,
            meanBytes: Double(packets.reduce(0) { $0 + $1.count }) / Double(packets.count),
            spectralDistanceDecibels: SpectralDistance.decibels(input: Array(frames.joined()), output: decoded, delay: Int(lookahead)))
    }

}
