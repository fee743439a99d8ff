import Foundation
import Testing
@testable import OpenGameKitVoice
import NetworkFaultProxy
import VoiceTestSupport

/// End to end on real speech: espeak-ng WAV → WAVFileSource → send pipeline → packets (with loss) →
/// receive pipeline → mixer → WAVFileSink, and the result compared with the input.
@Suite(.serialized) struct VoicePipelineTests {
    struct Run {
        var input: [Int16]
        var output: [Int16]
        var packets: [VoicePacket]
        var statistics: VoiceJitterBuffer.Statistics
        /// Ticks on which the receive pipeline reported the sender speaking, and not.
        var speakingTicks = 0, silentTicks = 0
    }

    static func run(speech: String, loss: Double, fec: Bool, seed: UInt64 = 42) throws -> Run {
        let source = try WAVFileSource(path: speech)
        var configuration = VoiceSendPipeline.Configuration()
        configuration.fec = fec
        let send = try VoiceSendPipeline(configuration)
        let receive = try VoiceReceivePipeline()
        let mixer = VoiceMixer()
        let outPath = TestAudio.temporaryPath("out.wav")
        defer { try? FileManager.default.removeItem(atPath: outPath) }
        let sink = try WAVFileSink(path: outPath)
        var random = SplitMix64(seed: seed)
        var input: [Int16] = [], packets: [VoicePacket] = []
        var tail = 0, speakingTicks = 0, silentTicks = 0
        // Half a second of silence after the speech lets the buffers drain.
        while tail < 25 {
            let frame: [Int16]
            if case .frame(let f) = try source.readFrame() { frame = f } else { frame = [Int16](repeating: 0, count: 960); tail += 1 }
            input += frame
            if let packet = try send.process(frame) {
                packets.append(packet)
                if Double.random(in: 0..<1, using: &random) >= loss { try receive.receive(packet.bytes, from: "alice") }
            }
            let frames = receive.tick()
            for frame in frames.values { if frame.speaking { speakingTicks += 1 } else { silentTicks += 1 } }
            try sink.writeFrame(mixer.mix(frames.mapValues(\.samples)))
        }
        try sink.close()
        let output = try TestAudio.readAll(WAVFileSource(path: outPath))
        return Run(
            input: input, output: output, packets: packets, statistics: receive.statistics(for: "alice")!,
            speakingTicks: speakingTicks, silentTicks: silentTicks)
    }

    @Test(.enabled(if: TestAudio.hasEspeak, "espeak-ng is missing: apt-get install espeak-ng"))
    func cleanSpeechSurvivesTheRoundTrip() throws {
        let speech = try TestAudio.speak()
        defer { try? FileManager.default.removeItem(atPath: speech) }
        let run = try Self.run(speech: speech, loss: 0, fec: true)
        let s = TestAudio.similarity(input: run.input, output: run.output)
        let frames = run.input.count / 960
        print(
            "clean: delay \(s.delay) samples, envelope correlation \(String(format: "%.3f", s.envelope)), waveform \(String(format: "%.3f", s.waveform)); \(run.packets.count) packets for \(frames) frames"
        )
        #expect(s.envelope >= 0.9, "envelope correlation \(s.envelope) is below 0.9")
        #expect(s.waveform >= 0.8, "waveform correlation \(s.waveform) is below 0.8")
        // DTX: the pauses (about 3 s of the speech) send few packets; the speaking flag follows the voice.
        #expect(run.packets.count < frames * 85 / 100, "\(run.packets.count) packets for \(frames) frames: DTX sent the pauses")
        #expect(run.packets.contains { $0.speaking } && run.packets.contains { !$0.speaking })
        // The receiver follows: speaking for the words, silent in the pauses (about 3 s of them).
        print("receiver: speaking on \(run.speakingTicks) ticks, silent on \(run.silentTicks)")
        #expect(run.speakingTicks > frames / 2 && run.silentTicks > 100)
        #expect(run.statistics.lost == 0 && run.statistics.late == 0, "\(run.statistics)")
    }

    @Test(.enabled(if: TestAudio.hasEspeak, "espeak-ng is missing: apt-get install espeak-ng"))
    func tenPercentLossWithFECBeatsWithout() throws {
        let speech = try TestAudio.speak()
        defer { try? FileManager.default.removeItem(atPath: speech) }
        let withFEC = try Self.run(speech: speech, loss: 0.10, fec: true)
        let withoutFEC = try Self.run(speech: speech, loss: 0.10, fec: false)
        let a = TestAudio.similarity(input: withFEC.input, output: withFEC.output)
        let b = TestAudio.similarity(input: withoutFEC.input, output: withoutFEC.output)
        print(
            "10 % loss, FEC on: envelope \(String(format: "%.3f", a.envelope)), waveform \(String(format: "%.3f", a.waveform)), \(withFEC.statistics.lost) frames lost"
        )
        print(
            "10 % loss, FEC off: envelope \(String(format: "%.3f", b.envelope)), waveform \(String(format: "%.3f", b.waveform)), \(withoutFEC.statistics.lost) frames lost"
        )
        #expect(withFEC.statistics.lost > 0, "the loss pattern dropped nothing")
        #expect(a.envelope >= 0.85, "with FEC, envelope correlation \(a.envelope) is below 0.85")
        #expect(a.waveform >= 0.75, "with FEC, waveform correlation \(a.waveform) is below 0.75")
        #expect(a.waveform > b.waveform, "FEC (\(a.waveform)) did not beat concealment alone (\(b.waveform))")
    }

    @Test(.enabled(if: TestAudio.hasEspeak, "espeak-ng is missing: apt-get install espeak-ng"))
    func echoOfTheFarEndIsNotSentAsSpeech() throws {
        let speech = try TestAudio.speak()
        defer { try? FileManager.default.removeItem(atPath: speech) }
        let played = try TestAudio.readAll(WAVFileSource(path: speech))
        // The microphone hears only the speakers: the far end's voice 5 ms later at half level.
        let captured = [Int16](repeating: 0, count: 240) + played.map { $0 / 2 }
        func speakingPackets(echoCancellation: Bool) throws -> Int {
            var configuration = VoiceSendPipeline.Configuration()
            configuration.echoCancellation = echoCancellation
            let send = try VoiceSendPipeline(configuration)
            var speaking = 0
            for start in stride(from: 0, to: played.count - 959, by: 960) {
                let packet = try send.process(Array(captured[start..<start + 960]), played: Array(played[start..<start + 960]))
                // The first 3 s let the canceller adapt.
                if start >= 144_000, packet?.speaking == true { speaking += 1 }
            }
            return speaking
        }
        let cancelled = try speakingPackets(echoCancellation: true), raw = try speakingPackets(echoCancellation: false)
        print("echo only: \(cancelled) packets flagged speaking with echo cancellation, \(raw) without")
        #expect(raw > 100, "without cancellation the echo is sent as speech")
        #expect(cancelled < raw / 4)
    }

    /// Push-to-talk released mid-word: without `finish()` the listener conceals the cut stream for half a second
    /// (Opus's guess at speech that never came, and "speaking" all along); with it the listener falls silent at once.
    @Test(.enabled(if: TestAudio.hasEspeak, "espeak-ng is missing: apt-get install espeak-ng"))
    func finishingACutTalkSpurtSilencesTheListenerAtOnce() throws {
        let speech = try TestAudio.speak()
        defer { try? FileManager.default.removeItem(atPath: speech) }
        let source = try WAVFileSource(path: speech)
        var frames: [[Int16]] = []
        while case .frame(let frame) = try source.readFrame() { frames.append(frame) }

        func afterTheCut(finishing: Bool) throws -> (energy: Double, speakingTicks: Int) {
            let send = try VoiceSendPipeline(), receive = try VoiceReceivePipeline()
            var spoken = 0
            for frame in frames {
                if let packet = try send.process(frame) { try receive.receive(packet.bytes, from: "alice") }
                _ = receive.tick()
                if send.speaking { spoken += 1 }
                // Cut mid-word: after a loud frame, well into the speech.
                let loud = frame.contains { abs(Int($0)) > 8_000 }
                if spoken >= 40, loud { break }
            }
            if finishing, let end = try send.finish() { try receive.receive(end.bytes, from: "alice") }
            var energy = 0.0, speakingTicks = 0
            for tick in 0..<25 {
                let frame = try #require(receive.tick()["alice"])
                // The first frame after the cut holds the decoder's fade-out of the last word either way.
                if tick > 0 { energy += frame.samples.reduce(0.0) { $0 + Double($1) * Double($1) } }
                if frame.speaking { speakingTicks += 1 }
            }
            return (energy, speakingTicks)
        }
        let finished = try afterTheCut(finishing: true), cut = try afterTheCut(finishing: false)
        print("after a cut talk spurt: energy \(finished.energy) finished, \(cut.energy) cut; speaking ticks \(finished.speakingTicks), \(cut.speakingTicks)")
        #expect(cut.speakingTicks >= 20 && cut.energy > 1e8, "the cut stream should be concealed (the test means nothing otherwise)")
        #expect(finished.speakingTicks == 0, "the listener still hears the talker speaking after the spurt was finished")
        #expect(finished.energy < cut.energy / 20, "the finished stream is not silent: \(finished.energy) against \(cut.energy)")
    }

    @Test func receivePipelineKeepsSendersApart() throws {
        let receive = try VoiceReceivePipeline(maxSenders: 2)
        let encoder = try OpusVoiceEncoder(dtx: false)
        let tone = (0..<960).map { Int16(8_000 * sin(2 * Double.pi * 400 * Double($0) / 48_000)) }
        for i in 0..<6 {
            let packet = try VoicePacket(speaking: true, sequence: UInt16(i), timestamp: UInt32(i), opus: encoder.encode(tone))
            try receive.receive(packet.bytes, from: "alice")
        }
        try receive.receive(VoicePacket(speaking: false, sequence: 0, timestamp: 0, opus: [0xF8, 0xFF, 0xFE]), from: "bob")
        #expect(Set(receive.senders) == ["alice", "bob"])
        #expect { try receive.receive([0x10, 0, 0, 0, 0, 0, 0, 0xF8], from: "carol") } throws: {
            ($0 as? VoiceError)?.message.contains("2 senders allowed") == true
        }
        #expect { try receive.receive([0x30, 1, 2], from: "alice") } throws: { ($0 as? VoiceError)?.code == .malformedPacket }
        var ticks: [[String: VoiceReceivePipeline.Frame]] = []
        for _ in 0..<4 { ticks.append(receive.tick()) }
        // The jitter buffer starts at one frame: the packets play from the first tick after they arrived.
        #expect(ticks.allSatisfy { $0["alice"]?.speaking == true })
        #expect(ticks[3]["bob"]?.speaking == false)
        #expect(ticks.allSatisfy { $0.values.allSatisfy { $0.samples.count == 960 } })
        let level = ticks[3]["alice"]!.samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        #expect(level > 1e9, "alice's tone is decoded")
        receive.remove("bob")
        #expect(receive.senders == ["alice"])
    }

    @Test(.enabled(if: TestAudio.hasEspeak && TestAudio.hasOpusdec, "espeak-ng or opus-tools is missing: apt-get install espeak-ng opus-tools"))
    func opusdecDecodesOurStream() throws {
        let speech = try TestAudio.speak()
        let ogg = TestAudio.temporaryPath("stream.opus"), decoded = TestAudio.temporaryPath("opusdec.wav")
        defer { for p in [speech, ogg, decoded] { try? FileManager.default.removeItem(atPath: p) } }
        let source = try WAVFileSource(path: speech)
        let send = try VoiceSendPipeline()
        var input: [Int16] = [], frames: [[UInt8]] = []
        var lastTOC: UInt8 = 0
        while case .frame(let frame) = try source.readFrame() {
            input += frame
            if let packet = try send.process(frame) {
                frames.append(packet.opus)
                lastTOC = packet.opus[0]
            } else {
                // A frame DTX did not send is, in an Ogg stream, the TOC byte alone (code 0, an empty frame).
                frames.append([lastTOC & 0xFC])
            }
        }
        var writer = OggOpusWriter(preSkip: send.codecDelay)
        let pages = stride(from: 0, to: frames.count, by: 50).map { Array(frames[$0..<min($0 + 50, frames.count)]) }
        for (i, page) in pages.enumerated() { writer.append(page, last: i == pages.count - 1) }
        try Data(writer.bytes).write(to: URL(fileURLWithPath: ogg))
        try TestAudio.run(TestAudio.opusdec, ["--quiet", "--rate", "48000", ogg, decoded])
        let output = try TestAudio.readAll(WAVFileSource(path: decoded))
        let s = TestAudio.similarity(input: input, output: output)
        print(
            "opusdec: \(output.count) samples for \(input.count) in, delay \(s.delay), envelope \(String(format: "%.3f", s.envelope)), waveform \(String(format: "%.3f", s.waveform))"
        )
        #expect(abs(output.count - input.count) <= 960, "opusdec gave \(output.count) samples for \(input.count)")
        #expect(s.envelope >= 0.9, "envelope correlation \(s.envelope) is below 0.9")
        #expect(s.waveform >= 0.65, "waveform correlation \(s.waveform) is below 0.65")
    }
}
