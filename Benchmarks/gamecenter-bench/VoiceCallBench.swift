import ArgumentParser
import Dispatch
import Foundation
import OpenGameKitVoice
import Synchronization

/// Two-party calls (`GKVoiceChatService`) between two services in this process, their signalling carried by a
/// dispatch queue each way (standing in for the game's own connection): how long a call takes to start, direct and
/// through the client's real-time channel, mouth-to-ear through the whole call, and the CPU a call costs.
enum VoiceCallBench {
    /// A client whose channel to the other service is a serial queue.
    final class LoopbackClient: GKVoiceChatClient, Sendable {
        let id: String
        let service = GKVoiceChatService()
        private let queue: DispatchQueue
        private let state = Mutex((peer: GKVoiceChatService?.none, hidden: false, started: 0))

        init(_ id: String) {
            self.id = id
            queue = DispatchQueue(label: "bench call \(id)")
            service.client = self
        }

        /// Joins the two clients' channels.
        static func pair() -> (LoopbackClient, LoopbackClient) {
            let a = LoopbackClient("a"), b = LoopbackClient("b")
            a.state.withLock { $0.peer = b.service }
            b.state.withLock { $0.peer = a.service }
            return (a, b)
        }

        /// With true, the client offers only an address nobody answers at: no direct path.
        func hideCandidates(_ hidden: Bool) { state.withLock { $0.hidden = hidden } }
        /// How many calls started.
        var started: Int { state.withLock { $0.started } }

        func participantID() -> String { id }

        func voiceChatService(_ service: GKVoiceChatService, send data: Data, toParticipantID participantID: String) {
            let (peer, hidden) = state.withLock { ($0.peer, $0.hidden) }
            var data = data
            if hidden, var signal = VoiceCallSignal(bytes: data), !signal.candidates.isEmpty {
                signal.candidates = [VoiceCallCandidate(address: [127, 0, 0, 1], port: 9)]
                data = Data(signal.bytes)
            }
            let id = self.id, delivered = data
            queue.async { peer?.receivedData(delivered, fromParticipantID: id) }
        }

        func voiceChatService(_ service: GKVoiceChatService, sendRealTimeData data: Data, toParticipantID participantID: String) {
            let peer = state.withLock { $0.peer }
            let id = self.id
            queue.async { peer?.receivedRealTimeData(data, fromParticipantID: id) }
        }

        func voiceChatService(_ service: GKVoiceChatService, didStartWithParticipantID participantID: String) {
            state.withLock { $0.started += 1 }
        }
    }

    /// Polls `condition` every millisecond until it holds; throws after `timeout`.
    static func wait(_ what: String, timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ValidationError("timed out waiting until \(what)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// `count` calls one after the other: from `startVoiceChat` to the caller's `didStart`, in seconds.
    static func setupTimes(count: Int, direct: Bool) async throws -> [Double] {
        let (a, b) = LoopbackClient.pair()
        for client in [a, b] {
            client.hideCandidates(!direct)
            client.service.setVoiceAudio(source: try PCMPushSource(), sink: StampedDiscard())
        }
        var times: [Double] = []
        for _ in 0..<count {
            let before = a.started
            let start = ContinuousClock.now
            try a.service.startVoiceChat(withParticipantID: b.id)
            try await wait("the call started") { a.started > before }
            let elapsed = ContinuousClock.now - start
            times.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            a.service.stopVoiceChat(withParticipantID: b.id)
            try await wait("the call ended on both sides") { a.service.connectedPaths.isEmpty && b.service.connectedPaths.isEmpty }
        }
        return times
    }

    /// What talking through one call measured.
    struct Talk {
        /// Mouth-to-ear per window of speech, seconds (as `VoiceEngineLatency` finds it).
        var delays: [Double]
        var unmatchedWindows: Int
        /// CPU seconds per second of the two services' audio threads (both ends of the call).
        var audioThreadCores: Double
        /// CPU seconds per second of the whole process (both ends, their sockets and queues, this bench's polling).
        var processCores: Double
        /// How the caller reached the callee.
        var path: String
    }

    /// A talks `speech` to B in real time through one call; B's speaker is stamped as it plays.
    static func talk(speech: [[Int16]], direct: Bool) async throws -> Talk {
        let (a, b) = LoopbackClient.pair()
        let clock = VoiceEngineLatency.BenchClock()
        let microphone = VoiceEngineLatency.StampedMicrophone(frames: speech, clock: clock)
        let speaker = VoiceEngineLatency.StampedSpeaker(clock: clock)
        for client in [a, b] { client.hideCandidates(!direct) }
        a.service.setVoiceAudio(source: microphone, sink: StampedDiscard())
        b.service.setVoiceAudio(source: try PCMPushSource(), sink: speaker)
        try a.service.startVoiceChat(withParticipantID: b.id)
        try await wait("the call started", timeout: .seconds(30)) { a.started > 0 && b.started > 0 }
        let path = a.service.connectedPaths[b.id] ?? "none"
        let threadsBefore = ThreadClock.threads(named: "OGK voice calls"), processBefore = ProcessCPU.seconds()
        let wallBefore = clock.seconds()
        try await wait("the speech was said", timeout: .milliseconds(speech.count * VoiceFormat.frameMilliseconds) + .seconds(30)) {
            microphone.hasEnded
        }
        let wall = clock.seconds() - wallBefore
        let threads = ThreadClock.seconds(named: "OGK voice calls", since: threadsBefore), process = ProcessCPU.seconds() - processBefore
        try await Task.sleep(for: .seconds(1))
        a.service.stopVoiceChat(withParticipantID: b.id)
        let measured = VoiceEngineLatency.figures(
            speech: speech, read: microphone.readTimes, listeners: [speaker.frames], states: VoiceEngineLatency.StateTimes(), count: 1)
        return Talk(
            delays: measured.delays, unmatchedWindows: measured.unmatchedWindows, audioThreadCores: threads / wall, processCores: process / wall, path: path)
    }

    /// A speaker that plays nowhere.
    final class StampedDiscard: VoiceAudioSink {
        func writeFrame(_ frame: [Int16]) throws(VoiceError) {}
    }

    /// Prints the two-party part of `gamecenter-bench voice`, against the bare codec's CPU and the raw UDP RTT.
    static func report(speech: [[Int16]], setups: Int, opus: OpusAnchor.Figures, rawRTT: RawUDPPingPong.Figures) async throws {
        print("\n## Ours: two-party calls (GKVoiceChatService), two services in this process, signalling over a dispatch queue each way")
        let direct = try await setupTimes(count: setups, direct: true)
        print(
            String(
                format:
                    "setup, startVoiceChat → didStart, direct UDP path (invite, accept, one probe answered): p50 %.2f ms, p99 %.2f ms over %d calls; %.1f× the raw UDP RTT (%.1f µs)",
                percentile(direct, 0.5) * 1000, percentile(direct, 0.99) * 1000, direct.count, percentile(direct, 0.5) / rawRTT.p50, rawRTT.p50 * 1e6))
        let fallback = try await setupTimes(count: 3, direct: false)
        print(
            String(
                format: "setup, no direct path (the client's real-time channel after %.0f s of probing): p50 %.3f s over %d calls",
                Double(GKVoiceChatService.Timeouts().directPath.components.seconds), percentile(fallback, 0.5), fallback.count))
        let bareCores = (opus.encodeMicroseconds + opus.decodeMicroseconds) * 1000 / Double(VoiceFormat.frameMilliseconds) / 1e6
        for direct in [true, false] {
            let talk = try await talk(speech: speech, direct: direct)
            guard !talk.delays.isEmpty else { throw ValidationError("the listener's output never followed the speech") }
            print(
                String(
                    format:
                        "%@ (%@): mouth-to-ear p50 %.1f ms, p99 %.1f ms (%d windows of %.0f s, %d without speech to match); CPU of the one-way call (talker and listener): audio threads %.2f %% of a core = %.2f× bare libopus encoding and decoding every frame (%.2f %%), whole process %.2f %%",
                    direct ? "direct" : "real-time channel", talk.path, percentile(talk.delays, 0.5) * 1000, percentile(talk.delays, 0.99) * 1000,
                    talk.delays.count, VoiceEngineLatency.windowSeconds, talk.unmatchedWindows, talk.audioThreadCores * 100,
                    talk.audioThreadCores / bareCores, bareCores * 100, talk.processCores * 100))
        }
    }
}
