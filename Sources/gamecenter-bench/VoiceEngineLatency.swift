import ArgumentParser
import Foundation
import OpenGameKit
import OpenGameKitVoice

/// Mouth-to-ear through the whole voice path, measured rather than added up: one talker's voice engine reads
/// espeak-ng speech from a microphone that stamps each frame as it is read, and three listeners' engines write to
/// speakers that stamp each frame as it is written; everything between (preprocessing, VAD, Opus, the relay, the
/// jitter buffer, decoding, mixing) is the product's. Device buffers are excluded: a frame counts as spoken when
/// its capture ends and as heard when it is handed to the speaker.
///
/// Also how closely the listeners agree on the talker's speaking and silent states (the 100 ms).
enum VoiceEngineLatency {
    /// What one run measured.
    struct Figures {
        /// Speech onsets (a loud sample after at least `quietFrames` quiet frames) found in the input.
        var onsets = 0
        /// Onset delays heard, in seconds, over every listener.
        var delays: [Double] = []
        /// Onsets a listener never played within `searchSeconds`.
        var missed = 0
        /// For each speaking/silent transition every listener reported, the spread of the times they reported it.
        var spreads: [Double] = []
        /// Transitions the listeners did not all report.
        var unmatched = 0
    }

    /// A sample this loud (about −30 dBFS) is speech.
    static let loud: Int16 = 1_000
    /// Frames below `loud` before an onset: a sentence's start, not a syllable's.
    static let quietFrames = 15
    /// How long after an onset a listener's speaker is searched for it.
    static let searchSeconds = 0.5

    /// A microphone that gives its frames as fast as the engine reads them (every 20 ms) and records when.
    final class StampedMicrophone: VoiceAudioSource, @unchecked Sendable {
        private let frames: [[Int16]]
        private let clock: BenchClock
        private let lock = NSLock()
        private var read: [Double] = []

        init(frames: [[Int16]], clock: BenchClock) {
            self.frames = frames
            self.clock = clock
        }

        func readFrame() throws(VoiceError) -> VoiceFrameRead {
            lock.withLock {
                guard read.count < frames.count else { return .end }
                read.append(clock.seconds())
                return .frame(frames[read.count - 1])
            }
        }

        /// When each frame was read, in `BenchClock` seconds.
        var readTimes: [Double] { lock.withLock { read } }
        /// Whether every frame was read.
        var hasEnded: Bool { lock.withLock { read.count == frames.count } }
    }

    /// A speaker that keeps, for each frame written, when it was written and where its first loud sample is.
    final class StampedSpeaker: VoiceAudioSink, @unchecked Sendable {
        private let clock: BenchClock
        private let lock = NSLock()
        private var written: [(time: Double, firstLoud: Int?)] = []

        init(clock: BenchClock) { self.clock = clock }

        func writeFrame(_ frame: [Int16]) throws(VoiceError) {
            let time = clock.seconds()
            // Interleaved stereo: the sample index of the first loud value, in mono samples.
            let firstLoud = frame.firstIndex { $0 >= VoiceEngineLatency.loud || $0 <= -VoiceEngineLatency.loud }.map { $0 / 2 }
            lock.withLock { written.append((time, firstLoud)) }
        }

        /// Every frame written so far.
        var frames: [(time: Double, firstLoud: Int?)] { lock.withLock { written } }
    }

    /// Seconds since it was made, on the continuous clock.
    final class BenchClock: Sendable {
        private let start = ContinuousClock.now
        func seconds() -> Double {
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
    }

    /// Records the talker's states as each listener hears them.
    final class StateTimes: @unchecked Sendable {
        private let lock = NSLock()
        private var times: [Int: [(state: GKVoiceChatPlayerState, time: Double)]] = [:]

        func record(listener: Int, _ state: GKVoiceChatPlayerState, at time: Double) {
            lock.withLock { times[listener, default: []].append((state, time)) }
        }

        /// Each listener's speaking and silent transitions, in order.
        func transitions(of listener: Int) -> [(state: GKVoiceChatPlayerState, time: Double)] {
            lock.withLock { (times[listener] ?? []).filter { $0.state == .speaking || $0.state == .silent } }
        }
    }

    /// Plays `speech` into the first member's engine and listens on the other three; `quad` is one formed match.
    static func measure(quad: VoiceMatches, speech: [[Int16]]) async throws -> Figures {
        let members = quad.matches[0]
        guard members.count >= 2 else { throw ValidationError("the engine latency needs a match of two or more") }
        let clock = BenchClock()
        let microphone = StampedMicrophone(frames: speech, clock: clock)
        let speakers = members.map { _ in StampedSpeaker(clock: clock) }
        let states = StateTimes()
        let talkerID = members[0].voice.localPlayerID
        let channel = "engine"
        var chats: [GKVoiceChat] = []
        for (index, match) in members.enumerated() {
            match.setVoiceAudio(source: index == 0 ? microphone : try PCMPushSource(), sink: speakers[index])
            let chat = try match.voiceChat(named: channel)
            if index > 0 {
                chat.playerStateUpdateHandler = { player, state in
                    if player == talkerID { states.record(listener: index, state, at: clock.seconds()) }
                }
            }
            chats.append(chat)
        }
        for chat in chats.dropFirst() { chat.start() }
        try await quad.waitUntil { match in
            match === members[0] ? match.voice.members(of: channel).values.filter { $0 == .listening }.count == members.count - 1 : true
        }
        chats[0].isActive = true
        chats[0].start()
        let deadline = ContinuousClock.now + .milliseconds(speech.count * VoiceFormat.frameMilliseconds) + .seconds(30)
        while !microphone.hasEnded {
            guard ContinuousClock.now < deadline else { throw ValidationError("the talker's engine did not read its speech in time") }
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .seconds(1))
        for chat in chats { chat.stop() }
        return figures(speech: speech, read: microphone.readTimes, listeners: speakers.dropFirst().map(\.frames), states: states, count: members.count - 1)
    }

    private static func figures(
        speech: [[Int16]], read: [Double], listeners: [[(time: Double, firstLoud: Int?)]], states: StateTimes, count: Int
    ) -> Figures {
        var figures = Figures()
        let frameSeconds = Double(VoiceFormat.frameMilliseconds) / 1000
        let sampleSeconds = 1 / Double(VoiceFormat.sampleRate)
        var quiet = 0
        for (index, frame) in speech.enumerated() {
            guard let offset = frame.firstIndex(where: { $0 >= loud || $0 <= -loud }) else {
                quiet += 1
                continue
            }
            defer { quiet = 0 }
            guard quiet >= quietFrames, index < read.count else { continue }
            figures.onsets += 1
            // The onset left the mouth when its sample was captured: the frame's capture ended when it was read.
            let spoken = read[index] - frameSeconds + Double(offset) * sampleSeconds
            for frames in listeners {
                let heard = frames.first { $0.time >= read[index] && $0.firstLoud != nil && $0.time - read[index] <= searchSeconds }
                if let heard, let at = heard.firstLoud {
                    figures.delays.append(heard.time + Double(at) * sampleSeconds - spoken)
                } else {
                    figures.missed += 1
                }
            }
        }
        let all = (1...count).map { states.transitions(of: $0) }
        guard let reference = all.first else { return figures }
        for transition in reference {
            let matches = all.compactMap { transitions in
                transitions.min { abs($0.time - transition.time) < abs($1.time - transition.time) }
                    .flatMap { $0.state == transition.state && abs($0.time - transition.time) <= searchSeconds ? $0.time : nil }
            }
            if matches.count == count {
                figures.spreads.append(matches.max()! - matches.min()!)
            } else {
                figures.unmatched += 1
            }
        }
        return figures
    }
}
