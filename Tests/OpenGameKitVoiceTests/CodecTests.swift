import Foundation
import Testing
@testable import OpenGameKitVoice
import NetworkFaultProxy
import VoiceTestSupport

@Suite struct CodecTests {
    @Test func rejectsBadSettingsAndFrames() throws {
        #expect { try OpusVoiceEncoder(bitrate: 100) } throws: { ($0 as? VoiceError)?.message.contains("6000…510000") == true }
        #expect(throws: VoiceError.self) { try OpusVoiceEncoder(expectedPacketLoss: 101) }
        let encoder = try OpusVoiceEncoder()
        #expect { try encoder.encode([0, 1]) } throws: { ($0 as? VoiceError)?.message.contains("960 samples") == true }
        #expect(throws: VoiceError.self) { try encoder.setExpectedPacketLoss(-1) }
        #expect(throws: VoiceError.self) { try encoder.setBitrate(600_000) }
        try encoder.setBitrate(12_000)
        #expect(encoder.bitrate == 12_000)
        #expect(encoder.lookahead > 0)
    }

    @Test func malformedPacketsGiveErrorsOrConcealmentNeverATrap() throws {
        let decoder = try OpusVoiceDecoder()
        let seed = TestSeed(default: 3)
        var random = seed.generator
        var errors = 0
        for length in 1...300 {
            let garbage = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            do { #expect(try decoder.decode(garbage).count == 960, "\(seed)") } catch { errors += 1; #expect(error.code == .malformedPacket, "\(seed)") }
            #expect(decoder.recover(fromNext: garbage).count == 960, "\(seed)")
        }
        print("garbage packets rejected: \(errors) of 300 (\(seed))")
        #expect(errors > 0, "\(seed)")
        #expect(throws: VoiceError.self) { try decoder.decode([]) }
        // A valid 40 ms packet (code 1: two 20 ms frames) is not one voice frame.
        #expect { try decoder.decode([0x09, 0, 0]) } throws: { ($0 as? VoiceError)?.message.contains("one 20 ms Opus frame") == true }
        #expect(decoder.conceal().count == 960)
    }

    @Test func fecRecoversALostFrameBetterThanConcealment() throws {
        let encoder = try OpusVoiceEncoder(expectedPacketLoss: 20, fec: true, dtx: false)
        // A gliding tone with vibrato: concealment can only guess it, FEC carries it.
        var phase = 0.0
        let signal: [[Int16]] = (0..<50).map { f in
            (0..<960).map { i in
                let t = Double(f * 960 + i) / 48_000
                phase += 2 * .pi * (300 + 400 * t + 30 * sin(2 * .pi * 6 * t)) / 48_000
                return Int16(8_000 * sin(phase))
            }
        }
        let packets = try signal.map { try encoder.encode($0) }
        func error(recover: Bool) throws -> Double {
            let decoder = try OpusVoiceDecoder()
            var total = 0.0
            for (i, packet) in packets.enumerated() {
                guard i % 5 == 3 else {
                    _ = try decoder.decode(packet)
                    continue
                }
                let frame = recover ? decoder.recover(fromNext: packets[i + 1]) : decoder.conceal()
                // Compare with the input the frame stands for: Opus output lags its input by the look-ahead.
                let lag = encoder.lookahead
                let reference = Array((signal[i - 1] + signal[i]).dropFirst(960 - lag).prefix(960))
                total += zip(frame, reference).reduce(0.0) { $0 + pow(Double($1.0) - Double($1.1), 2) }
            }
            return total
        }
        let withFEC = try error(recover: true), concealed = try error(recover: false)
        print("lost-frame error energy: FEC \(String(format: "%.3g", withFEC)), concealment \(String(format: "%.3g", concealed))")
        #expect(withFEC < concealed / 2)
    }
}
