import ArgumentParser
import Foundation
import OpenGameKit
import OpenGameKitVoice

/// Mouth-to-ear through the whole voice path, measured rather than added up: one talker's voice engine reads
/// espeak-ng speech from a microphone that stamps each frame as it is read, and three listeners' engines write to
/// speakers that stamp each frame as it is written; everything between (preprocessing, VAD, Opus, the relay, the
/// jitter buffer, decoding, mixing) is the product's. Device buffers are excluded: a frame counts as spoken in the
/// middle of its 20 ms of capture (which ends when the engine reads it) and as heard in the middle of its 20 ms of
/// playback (which starts when it is handed to the speaker). The delay is where the speech's loudness envelope over
/// wall-clock time best matches each listener's, found per window of `windowSeconds` on a 1 ms grid; onsets and
/// thresholds play no part, so the preprocessor's shaping of a word's attack does not bias it.
///
/// Also how closely the listeners agree on the talker's speaking and silent states (the 100 ms).
enum VoiceEngineLatency {
    /// What one run measured.
    struct Figures {
        /// The delay found for each window and listener, in seconds.
        var delays: [Double] = []
        /// Windows whose best match was too weak to trust (silence, or no speech heard), over every listener.
        var unmatchedWindows = 0
        /// For each speaking/silent transition every listener reported, the spread of the times they reported it.
        var spreads: [Double] = []
        /// Transitions the listeners did not all report.
        var unmatched = 0
        /// Each listener's jitter buffer for the talker at the end: its delay in frames and its counters.
        var jitter: [(delay: Int, statistics: VoiceJitterBuffer.Statistics)] = []
        /// How long after the talker's engine reads a frame each listener's engine plays, modulo a frame (median, s):
        /// the wait for the next playback tick, which depends only on when the engines started.
        var tickPhases: [Double] = []
    }

    /// The length of speech each delay is found over.
    static let windowSeconds = 3.0
    /// The longest delay looked for.
    static let maxDelaySeconds = 0.4
    /// How far apart two listeners' reports of one transition may be and still count as the same one.
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

    /// A speaker that keeps, for each frame written, when it was written and its RMS level.
    final class StampedSpeaker: VoiceAudioSink, @unchecked Sendable {
        private let clock: BenchClock
        private let lock = NSLock()
        private var written: [(time: Double, level: Double)] = []

        init(clock: BenchClock) { self.clock = clock }

        func writeFrame(_ frame: [Int16]) throws(VoiceError) {
            let time = clock.seconds()
            let level = VoiceEngineLatency.rms(frame)
            lock.withLock { written.append((time, level)) }
        }

        /// Every frame written so far.
        var frames: [(time: Double, level: Double)] { lock.withLock { written } }
    }

    /// The RMS of `samples`.
    static func rms(_ samples: [Int16]) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))).squareRoot()
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
        // Each engine ticks every 20 ms from when its first channel starts, so when a listener starts sets how long a
        // packet waits for its next playback tick (0–20 ms; on real hardware the sound card's clock sets it). The
        // listeners start spread across one frame, and the talker at a random point after, so the run samples that
        // wait across the frame instead of one phase that polling happened to pick.
        let listeners = members.count - 1
        for chat in chats.dropFirst() {
            chat.start()
            try await Task.sleep(for: .microseconds(VoiceFormat.frameMilliseconds * 1000 / listeners))
        }
        try await quad.waitUntil { match in
            match === members[0] ? match.voice.members(of: channel).values.filter { $0 == .listening }.count == listeners : true
        }
        try await Task.sleep(for: .microseconds(Int.random(in: 0..<VoiceFormat.frameMilliseconds * 1000)))
        chats[0].isActive = true
        chats[0].start()
        let deadline = ContinuousClock.now + .milliseconds(speech.count * VoiceFormat.frameMilliseconds) + .seconds(30)
        while !microphone.hasEnded {
            guard ContinuousClock.now < deadline else { throw ValidationError("the talker's engine did not read its speech in time") }
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .seconds(1))
        let jitter = chats.dropFirst().compactMap { $0.jitter[talkerID].map { (delay: $0.delay, statistics: $0.statistics) } }
        for chat in chats { chat.stop() }
        var measured = figures(
            speech: speech, read: microphone.readTimes, listeners: speakers.dropFirst().map(\.frames), states: states, count: members.count - 1)
        measured.jitter = jitter
        let reads = microphone.readTimes, frameSeconds = Double(VoiceFormat.frameMilliseconds) / 1000
        for speaker in speakers.dropFirst() {
            guard let first = reads.first else { continue }
            let phases = speaker.frames.map { ($0.time - first).truncatingRemainder(dividingBy: frameSeconds) }.filter { $0 >= 0 }.sorted()
            if !phases.isEmpty { measured.tickPhases.append(phases[phases.count / 2]) }
        }
        return measured
    }

    static func figures(
        speech: [[Int16]], read: [Double], listeners: [[(time: Double, level: Double)]], states: StateTimes, count: Int
    ) -> Figures {
        var figures = Figures()
        let half = Double(VoiceFormat.frameMilliseconds) / 2000
        // Loudness over wall-clock time, one point per frame at the middle of its capture or of its playback.
        let spoken = zip(read, speech).map { (time: $0 - half, level: rms($1)) }
        guard let first = spoken.first?.time, let last = spoken.last?.time else { return figures }
        for heard in listeners {
            let played = heard.map { (time: $0.time + half, level: $0.level) }
            var start = first
            while start + windowSeconds <= last {
                if let delay = bestDelay(spoken: spoken, heard: played, from: start, to: start + windowSeconds) {
                    figures.delays.append(delay)
                } else {
                    figures.unmatchedWindows += 1
                }
                start += windowSeconds
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

    /// The delay (0…`maxDelaySeconds`, 1 ms steps) at which the heard envelope best follows the spoken one between
    /// `start` and `end`; nil when the best correlation is below 0.8 (a window of silence, or speech not heard).
    private static func bestDelay(
        spoken: [(time: Double, level: Double)], heard: [(time: Double, level: Double)], from start: Double, to end: Double
    ) -> Double? {
        let step = 0.001
        let grid = Array(stride(from: start, to: end, by: step))
        let x = grid.map { interpolate(spoken, at: $0) }
        var best: (delay: Double, correlation: Double)?
        for lag in 0...Int(maxDelaySeconds / step) {
            let y = grid.map { interpolate(heard, at: $0 + Double(lag) * step) }
            let correlation = pearson(x, y)
            if correlation > best?.correlation ?? -1 { best = (Double(lag) * step, correlation) }
        }
        guard let best, best.correlation >= 0.8 else { return nil }
        return best.delay
    }

    /// The level of `points` (sorted by time) at `time`, linearly between the two around it; 0 outside them.
    private static func interpolate(_ points: [(time: Double, level: Double)], at time: Double) -> Double {
        var low = 0, high = points.count
        while low < high {
            let middle = (low + high) / 2
            if points[middle].time < time { low = middle + 1 } else { high = middle }
        }
        guard low > 0, low < points.count else { return 0 }
        let a = points[low - 1], b = points[low]
        let span = b.time - a.time
        return span > 0 ? a.level + (b.level - a.level) * (time - a.time) / span : a.level
    }

    private static func pearson(_ x: [Double], _ y: [Double]) -> Double {
        let n = Double(x.count)
        let mx = x.reduce(0, +) / n, my = y.reduce(0, +) / n
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for i in x.indices {
            let dx = x[i] - mx, dy = y[i] - my
            sxy += dx * dy
            sxx += dx * dx
            syy += dy * dy
        }
        return sxx > 0 && syy > 0 ? sxy / (sxx * syy).squareRoot() : 0
    }
}
