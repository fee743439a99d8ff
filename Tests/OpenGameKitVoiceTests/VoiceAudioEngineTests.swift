import Foundation
import Logging
import Testing
import VoiceTestSupport
@testable import OpenGameKitVoice

/// The audio engine under match voice and two-party calls, ticked by hand (no clock thread): a talker's engine reads
/// a game's `PCMPushSource` and encodes, a listener's pipeline and engine decode, mix and play.
@Suite(.serialized) struct VoiceAudioEngineTests {
    /// Speakers that keep every frame played.
    final class RecordingSink: VoiceAudioSink {
        var frames: [[Int16]] = []
        func writeFrame(_ frame: [Int16]) throws(VoiceError) { frames.append(frame) }
    }

    /// A game's audio engine stops pushing microphone samples for `pauseTicks` ticks (a pause menu, a hiccup) between
    /// two halves of a spoken text: the second half is heard as clearly as the first, within a couple of frames of
    /// the microphone resuming, after pauses of 0.1 s, 1.5 s and 60 s, and by a listener who joins during the pause.
    /// Before, the talker's timestamps stood still while the listener's clock ran on, so every packet after a pause
    /// longer than the jitter buffer's delay was late and dropped for good.
    @Test(
        .enabled(if: TestAudio.hasEspeak, "espeak-ng is missing: apt-get install espeak-ng"),
        arguments: [(5, false), (75, false), (3_000, false), (75, true)])
    func speechAfterAMicrophonePauseIsHeardAtOnce(pauseTicks: Int, listenerJoinsDuringThePause: Bool) throws {
        let path = try TestAudio.speak()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let speech = try TestAudio.readAll(WAVFileSource(path: path))
        let frames = stride(from: 0, to: speech.count, by: VoiceFormat.samplesPerFrame).map { start in
            Array(speech[start..<min(start + VoiceFormat.samplesPerFrame, speech.count)])
                + [Int16](repeating: 0, count: max(0, start + VoiceFormat.samplesPerFrame - speech.count))
        }
        let logger = Logger(label: "test")
        let microphone = try PCMPushSource()
        var talker = VoiceAudioEngine(logger: logger)
        talker.devices.use(.init(source: microphone, sink: RecordingSink()))
        let speakers = RecordingSink()
        var listener = VoiceAudioEngine(logger: logger)
        listener.devices.use(.init(source: try PCMPushSource(), sink: speakers))
        var receiver = listenerJoinsDuringThePause ? nil : try VoiceReceivePipeline()

        // One row per tick: what the talker's microphone got (silence while paused), and what the listener played.
        let silence = [Int16](repeating: 0, count: VoiceFormat.samplesPerFrame)
        let half = frames.count / 2
        let script: [[Int16]?] =
            frames[..<half].map { $0 } + Array(repeating: nil, count: pauseTicks) + frames[half...].map { $0 }
            + Array(repeating: silence, count: 25)
        var said: [Int16] = []
        for (tick, pushed) in script.enumerated() {
            if let pushed { microphone.push(pushed) }
            said += pushed ?? silence
            if listenerJoinsDuringThePause, tick == half + pauseTicks / 2 { receiver = try VoiceReceivePipeline() }
            if case .frame(let captured) = talker.readMicrophone(), let packet = talker.encode(captured) {
                try receiver?.receive(packet.bytes, from: "talker")
            }
            let streams = (receiver?.tick() ?? [:]).mapValues { (samples: $0.samples, settings: VoiceMixer.StreamSettings()) }
            if listener.play(streams) == nil { try speakers.writeFrame([Int16](repeating: 0, count: 2 * VoiceFormat.samplesPerFrame)) }
        }
        let heard = speakers.frames.flatMap { frame in stride(from: 0, to: frame.count, by: 2).map { frame[$0] } }
        #expect(heard.count == said.count)

        let resumed = (half + pauseTicks) * VoiceFormat.samplesPerFrame
        let after = TestAudio.similarity(input: Array(said[resumed...]), output: Array(heard[resumed...]))
        print(
            "after a pause of \(pauseTicks) ticks\(listenerJoinsDuringThePause ? " (listener joined during it)" : ""): delay \(after.delay) samples, envelope \(String(format: "%.3f", after.envelope)), waveform \(String(format: "%.3f", after.waveform))"
        )
        #expect(after.envelope >= 0.9, "envelope correlation \(after.envelope) of the speech after the pause is below 0.9")
        #expect(after.delay <= 3 * VoiceFormat.samplesPerFrame, "heard \(after.delay) samples after it was said")
        // The talker's clock ran on through the pause: no packet came after its turn, none was dropped.
        let statistics = try #require(receiver?.statistics(for: "talker"))
        #expect(statistics.late == 0 && statistics.overflowed == 0, "\(statistics)")
        if !listenerJoinsDuringThePause {
            let before = TestAudio.similarity(input: Array(said[..<resumed]), output: Array(heard[..<resumed]))
            #expect(before.envelope >= 0.9, "envelope correlation \(before.envelope) of the speech before the pause is below 0.9")
        }
    }
}
