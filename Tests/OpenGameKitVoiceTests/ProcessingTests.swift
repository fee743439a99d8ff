import Foundation
import Testing
@testable import OpenGameKitVoice
import NetworkFaultProxy
import VoiceTestSupport

@Suite(.serialized) struct ProcessingTests {
    static func frames(_ samples: [Int16]) -> [[Int16]] {
        stride(from: 0, to: samples.count - 959, by: 960).map { Array(samples[$0..<$0 + 960]) }
    }

    /// Speech with pauses plus steady noise at about −50 dBFS, as a microphone in a quiet room gives.
    static func noisySpeech() throws -> (clean: [Int16], noisy: [Int16]) {
        let path = try TestAudio.speak()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clean = try TestAudio.readAll(WAVFileSource(path: path))
        var random = SplitMix64(seed: 7)
        let noisy = clean.map { Int16(clamping: Int($0) + Int.random(in: -180...180, using: &random)) }
        return (clean, noisy)
    }

    @Test(.enabled(if: TestAudio.hasEspeak, "espeak-ng is missing: apt-get install espeak-ng"))
    func voiceActivityOnSpeechWithPauses() throws {
        let (clean, noisy) = try Self.noisySpeech()
        // Truth: a frame is speech if the clean speech in it is above −45 dBFS; frames within 300 ms after speech
        // are left out (either answer is fine in a hangover).
        let truth = Self.frames(clean).map { VoicePreprocessor.decibels($0) > -45 }
        var scored: [Int] = []
        var sinceSpeech = 1_000
        for (i, speech) in truth.enumerated() {
            sinceSpeech = speech ? 0 : sinceSpeech + 1
            if speech || sinceSpeech > 15 { scored.append(i) }
        }
        var results: [VoicePreprocessor.VADMode: (speech: Double, silence: Double)] = [:]
        for mode in [VoicePreprocessor.VADMode.speex, .energy] {
            var configuration = VoicePreprocessor.Configuration()
            configuration.vad = mode
            let preprocessor = try VoicePreprocessor(configuration)
            let decisions = try Self.frames(noisy).map { try preprocessor.process($0).speaking }
            let speechFrames = scored.filter { truth[$0] }, silentFrames = scored.filter { !truth[$0] }
            let hit = Double(speechFrames.filter { decisions[$0] }.count) / Double(speechFrames.count)
            let quiet = Double(silentFrames.filter { !decisions[$0] }.count) / Double(silentFrames.count)
            results[mode] = (hit, quiet)
            print(
                "VAD \(mode): speech frames detected \(String(format: "%.2f", hit)), silent frames left silent \(String(format: "%.2f", quiet)) (\(speechFrames.count) speech, \(silentFrames.count) silent)"
            )
        }
        let energy = results[.energy]!, speex = results[.speex]!
        #expect(energy.speech >= 0.9, "energy VAD missed speech: \(energy.speech)")
        #expect(energy.silence >= 0.8, "energy VAD heard speech in the pauses: \(energy.silence)")
        // Why energy is the default: it is right more often than speex's detector on the same audio.
        #expect(energy.speech + energy.silence > speex.speech + speex.silence)
    }

    @Test(.enabled(if: TestAudio.hasEspeak, "espeak-ng is missing: apt-get install espeak-ng"))
    func noiseSuppressionLowersThePauses() throws {
        let (clean, noisy) = try Self.noisySpeech()
        var configuration = VoicePreprocessor.Configuration()
        configuration.automaticGain = false
        let preprocessor = try VoicePreprocessor(configuration)
        let cleanFrames = Self.frames(clean), noisyFrames = Self.frames(noisy)
        let cleaned = try noisyFrames.map { try preprocessor.process($0).frame }
        // Pauses after the first second, when the noise estimate has settled.
        let pauses = cleanFrames.indices.dropFirst(50).filter { VoicePreprocessor.decibels(cleanFrames[$0]) < -90 }
        func mean(_ values: [Float]) -> Float { values.reduce(0, +) / Float(max(values.count, 1)) }
        let before = mean(pauses.map { VoicePreprocessor.decibels(noisyFrames[$0]) })
        let after = mean(pauses.map { VoicePreprocessor.decibels(cleaned[$0]) })
        print("noise in the pauses: \(before) dBFS in, \(after) dBFS after suppression (\(pauses.count) frames)")
        #expect(pauses.count > 20)
        #expect(after < before - 15)
    }

    @Test(.enabled(if: TestAudio.hasEspeak, "espeak-ng is missing: apt-get install espeak-ng"))
    func echoCancellerRemovesThePlayedVoice() throws {
        let path = try TestAudio.speak()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let played = Self.frames(try TestAudio.readAll(WAVFileSource(path: path)))
        // The room: the speaker's sound reaches the microphone 5 ms later at half level.
        let flat = played.flatMap { $0 }
        let captured = Self.frames([Int16](repeating: 0, count: 240) + flat.map { $0 / 2 })
        let canceller = try EchoCanceller()
        var inEnergy = 0.0, outEnergy = 0.0
        for (i, (mic, speaker)) in zip(captured, played).enumerated() {
            let out = try canceller.cancel(captured: mic, played: speaker)
            guard i >= 150 else { continue }
            inEnergy += mic.reduce(0.0) { $0 + Double($1) * Double($1) }
            outEnergy += out.reduce(0.0) { $0 + Double($1) * Double($1) }
        }
        let reduction = 10 * log10(inEnergy / max(outEnergy, 1))
        print("echo: \(String(format: "%.1f", reduction)) dB removed after 3 s of adaptation")
        #expect(reduction >= 10)
        #expect(throws: VoiceError.self) { try canceller.cancel(captured: [1], played: played[0]) }
    }

    @Test func resamplerKeepsPitchAndLength() throws {
        let resampler = try Resampler(from: 22_050, to: 48_000)
        let tone = (0..<22_050).map { Int16(10_000 * sin(2 * Double.pi * 440 * Double($0) / 22_050)) }
        var out: [Int16] = []
        for chunk in stride(from: 0, to: tone.count, by: 1_000) { out += resampler.process(Array(tone[chunk..<min(chunk + 1_000, tone.count)])) }
        out += resampler.flush()
        #expect(abs(out.count - 48_000) <= 48, "\(out.count) samples for one second")
        let middle = Array(out[4_800..<43_200])
        let cycles = zip(middle, middle.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        #expect(abs(cycles - 352) <= 2, "\(cycles) cycles in 0.8 s of 440 Hz")
        #expect(throws: VoiceError.self) { try Resampler(from: 0, to: 48_000) }
    }
}
