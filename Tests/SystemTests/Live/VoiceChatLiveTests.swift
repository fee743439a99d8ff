import Foundation
import GameCenterProtocol
import NetworkFaultProxy
@testable import OpenGameKit
import OpenGameKitVoice
import Testing
import VoiceTestSupport

/// GKVoiceChat end to end: real speech (espeak-ng) into one device's microphone (a WAV source), through a real
/// server's relay, out of the others' speakers (WAV sinks), with the real codec and every stage of the engine.
@Suite(.serialized, .timeLimit(.minutes(3))) struct VoiceChatLiveTests {
    /// Records what a channel's update handler hears.
    final class StateLog: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [(player: String, state: GKVoiceChatPlayerState, at: ContinuousClock.Instant)] = []

        func record(_ player: String, _ state: GKVoiceChatPlayerState) { lock.withLock { entries.append((player, state, .now)) } }
        func states(of player: String) -> [GKVoiceChatPlayerState] { lock.withLock { entries.filter { $0.player == player }.map(\.state) } }
        /// `player`'s speaking and silent transitions, with when each was heard.
        func talking(of player: String) -> [(state: GKVoiceChatPlayerState, at: ContinuousClock.Instant)] {
            lock.withLock { entries.filter { $0.player == player && ($0.state == .speaking || $0.state == .silent) }.map { ($0.state, $0.at) } }
        }
    }

    /// The samples of a WAV file, as 48 kHz mono.
    static func samples(_ path: String) throws -> [Int16] {
        try TestAudio.readAll(try WAVFileSource(path: path))
    }

    /// Waits until the voice engines have read every speaker's input to its end (they read in real time, 20 ms a
    /// frame), then until `listener` has played twice the jitter buffer's longest delay more: by then it has played
    /// the last packets. Both on the engines' own clocks, which a loaded machine slows down alike.
    static func waitUntilPlayed(_ speakers: [ObservedVoiceSource], speechMilliseconds: Int, into listener: ObservedWAVSink) async throws {
        try await waitUntil("the speakers' inputs were read to their end", within: .milliseconds(speechMilliseconds) + .seconds(30)) {
            speakers.allSatisfy(\.hasEnded)
        }
        let playedAtEnd = listener.framesWritten
        let drain = 2 * VoiceJitterBuffer.Configuration().maxDelay
        try await waitUntil("the listener played \(drain) frames after the speech ended", within: .seconds(30)) {
            listener.framesWritten >= playedAtEnd + drain
        }
    }

    /// Milliseconds of audio in `samples` (48 kHz).
    static func milliseconds(_ samples: [Int16]) -> Int { samples.count * 1000 / VoiceFormat.sampleRate }

    @Test(.enabled(if: TestAudio.hasEspeak, "needs espeak-ng (the test script installs it)"))
    func speechReachesTheListenersButNotTheMutingOrStoppedOnes() async throws {
        let server = try await RelayLiveTests.server()
        let (devices, matches) = try await RelayLiveTests.match(Array(repeating: server.url, count: 4))
        let ids = devices.map(RelayLiveTests.id)
        let speech = try TestAudio.speak()
        let outputs = (0..<4).map { TestAudio.temporaryPath("out\($0).wav") }
        let sinks = try outputs.map { try ObservedWAVSink(path: $0) }
        let microphone = ObservedVoiceSource(try WAVFileSource(path: speech))
        matches[0].setVoiceAudio(source: microphone, sink: sinks[0])
        for i in 1..<4 { matches[i].setVoiceAudio(source: try PCMPushSource(), sink: sinks[i]) }
        let chats = try matches.map { try $0.voiceChat(named: "team") }
        #expect(matches[0].voiceChat(withName: "team") === chats[0], "the same name must give the same object")
        let heard = StateLog(), heardByC = StateLog()
        chats[1].playerStateUpdateHandler = { player, state in heard.record(player, state) }
        // C muted A on its own device only: it still hears when A speaks (the state travels with the packets).
        chats[2].playerStateUpdateHandler = { player, state in heardByC.record(player, state) }

        // B listens; C listens but mutes A; D joined and stopped (the relay must not send it A's voice).
        chats[1].start()
        chats[2].start()
        chats[2].setMute(true, forPlayer: ids[0])
        chats[3].start()
        chats[3].stop()
        try await waitUntil("A sees B and C listening and D stopped") {
            matches[0].voice.members(of: "team") == [ids[1]: .listening, ids[2]: .listening, ids[3]: .joined]
        }
        chats[0].isActive = true
        chats[0].start()
        try await waitUntil("B sees A connected") { chats[1].playerIDs.contains(ids[0]) }

        let input = try Self.samples(speech)
        try await Self.waitUntilPlayed([microphone], speechMilliseconds: Self.milliseconds(input), into: sinks[1])
        for match in matches { match.disconnect() }
        for sink in sinks { try sink.close() }

        let listened = try Self.samples(outputs[1])
        let similarity = TestAudio.similarity(input: input, output: listened, maxDelay: 48_000)
        print(
            "voice chat live: B's output against A's speech: envelope \(similarity.envelope), waveform \(similarity.waveform), delay \(similarity.delay) samples"
        )
        #expect(similarity.envelope >= 0.8, "B's output does not follow A's speech (envelope correlation \(similarity.envelope))")

        let rms = Self.rms
        let speechLevel = rms(input)
        #expect(rms(try Self.samples(outputs[2])) < speechLevel / 100, "C muted A and still heard them")
        #expect(rms(try Self.samples(outputs[3])) < speechLevel / 100, "D stopped the channel and still heard A")
        #expect(heard.states(of: ids[0]).first == .connected)
        #expect(heard.states(of: ids[0]).contains(.speaking), "B never heard A start speaking")
        #expect(heard.states(of: ids[0]).contains(.silent), "B never heard A fall silent in the pauses")
        // Both listeners play the same packets, so they agree on A's turns; how closely in time is printed (the
        // bench measures it: `gamecenter-bench voice`).
        let byB = heard.talking(of: ids[0]), byC = heardByC.talking(of: ids[0])
        #expect(byB.map(\.state) == byC.map(\.state), "B and C disagree on when A spoke: \(byB.map(\.state)) against \(byC.map(\.state))")
        let spreads = zip(byB, byC).map { abs(($0.at - $1.at) / .milliseconds(1)) }
        print("voice chat live: B and C heard A's \(byB.count) speaking/silent turns at most \(String(format: "%.2f", spreads.max() ?? 0)) ms apart")
        let counters = try await RelayLiveTests.statistics(server)
        #expect(counters["voiceWithheld"] ?? 0 > 100, "the relay withheld nothing from the stopped device")
        try await server.stop()
    }

    /// The interleaved stereo samples of a WAV file `WAVFileSink` wrote (its header is 44 bytes).
    static func stereo(_ path: String) throws -> (left: [Int16], right: [Int16]) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path)).dropFirst(44)
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)).map { Int16(littleEndian: $0) } }
        return (stride(from: 0, to: samples.count - 1, by: 2).map { samples[$0] }, stride(from: 1, to: samples.count, by: 2).map { samples[$0] })
    }

    static func rms(_ samples: [Int16]) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))).squareRoot()
    }

    /// 10 % of the datagrams lost each way (a lossy UDP proxy in front of the relay): concealment and FEC keep the
    /// speech intelligible. The listener places the speaker to its left: the left channel carries it.
    @Test(.enabled(if: TestAudio.hasEspeak, "needs espeak-ng (the test script installs it)"))
    func speechSurvivesTenPercentLossAndIsPlacedWhereTheListenerPutsIt() async throws {
        let udpPort = try FreePort.udp()
        let udpProxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: udpPort, seed: 10)
        let server = try await RelayLiveTests.server(arguments: ["--udp-public", "127.0.0.1:\(udpProxy.port)"], udpPort: udpPort)
        let (devices, matches) = try await RelayLiveTests.match([server.url, server.url])
        let speech = try TestAudio.speak()
        let output = TestAudio.temporaryPath("lossy.wav")
        let sink = try ObservedWAVSink(path: output)
        let microphone = ObservedVoiceSource(try WAVFileSource(path: speech))
        matches[0].setVoiceAudio(source: microphone, sink: try PCMPullSink())
        matches[1].setVoiceAudio(source: try PCMPushSource(), sink: sink)
        let speaker = try matches[0].voiceChat(named: "team")
        let listener = try matches[1].voiceChat(named: "team")
        listener.setPosition(SIMD3(-4, 0, 0), forPlayer: RelayLiveTests.id(devices[0]))
        listener.start()
        try await waitUntil("A sees B listening") { matches[0].voice.members(of: "team")[RelayLiveTests.id(devices[1])] == .listening }
        // UDP is confirmed through the proxy before the loss begins (the probes would be lost too).
        try await RelayLiveTests.udpConfirmed(matches)
        udpProxy.setLoss(0.1)
        speaker.isActive = true
        speaker.start()
        let input = try Self.samples(speech)
        try await Self.waitUntilPlayed([microphone], speechMilliseconds: Self.milliseconds(input), into: sink)
        for match in matches { match.disconnect() }
        try sink.close()

        let similarity = TestAudio.similarity(input: input, output: try Self.samples(output), maxDelay: 48_000)
        print("voice chat live at 10 % loss: envelope \(similarity.envelope), waveform \(similarity.waveform); proxy dropped \(udpProxy.statistics.dropped)")
        #expect(udpProxy.statistics.dropped > 20, "the proxy lost too little for the test to mean anything")
        #expect(similarity.envelope >= 0.75, "at 10 % loss the output no longer follows the speech (envelope correlation \(similarity.envelope))")
        let (left, right) = try Self.stereo(output)
        print("voice chat live: left \(Self.rms(left)), right \(Self.rms(right))")
        #expect(Self.rms(left) > 2 * Self.rms(right), "a speaker placed to the left is not louder on the left")
        await udpProxy.stop()
        try await server.stop()
    }

    /// A player in two channels hears both, mixed into one output: A talks in "team", D in "all", B started both.
    @Test(.enabled(if: TestAudio.hasEspeak, "needs espeak-ng (the test script installs it)"))
    func twoChannelsMixIntoOneOutput() async throws {
        let server = try await RelayLiveTests.server()
        let (devices, matches) = try await RelayLiveTests.match(Array(repeating: server.url, count: 3))
        let ids = devices.map(RelayLiveTests.id)
        let first = try TestAudio.speak("The red team attacks the northern gate at dawn. Bring every archer you have.")
        let second = try TestAudio.speak("<speak><break time=\"1500ms\"/>Everyone, the match ends in five minutes. Good luck.</speak>")
        let output = TestAudio.temporaryPath("both.wav")
        let sink = try ObservedWAVSink(path: output)
        let microphones = [ObservedVoiceSource(try WAVFileSource(path: first)), ObservedVoiceSource(try WAVFileSource(path: second))]
        matches[0].setVoiceAudio(source: microphones[0], sink: try PCMPullSink())
        matches[1].setVoiceAudio(source: try PCMPushSource(), sink: sink)
        matches[2].setVoiceAudio(source: microphones[1], sink: try PCMPullSink())
        let listenerTeam = try matches[1].voiceChat(named: "team")
        let listenerAll = try matches[1].voiceChat(named: "all")
        listenerTeam.start()
        listenerAll.start()
        let team = try matches[0].voiceChat(named: "team")
        let all = try matches[2].voiceChat(named: "all")
        try await waitUntil("the talkers see B in their channels") {
            matches[0].voice.members(of: "team")[ids[1]] == .listening && matches[2].voice.members(of: "all")[ids[1]] == .listening
        }
        team.isActive = true
        all.isActive = true
        team.start()
        all.start()
        let a = try Self.samples(first), d = try Self.samples(second)
        try await Self.waitUntilPlayed(microphones, speechMilliseconds: max(Self.milliseconds(a), Self.milliseconds(d)), into: sink)
        for match in matches { match.disconnect() }
        try sink.close()

        let heard = try Self.samples(output)
        var both = [Int16](repeating: 0, count: max(a.count, d.count))
        for i in both.indices {
            let sum = Int32(i < a.count ? a[i] : 0) + Int32(i < d.count ? d[i] : 0)
            both[i] = Int16(clamping: sum)
        }
        let withBoth = TestAudio.similarity(input: both, output: heard, maxDelay: 48_000).envelope
        let withTeam = TestAudio.similarity(input: a, output: heard, maxDelay: 48_000).envelope
        let withAll = TestAudio.similarity(input: d, output: heard, maxDelay: 48_000).envelope
        print("voice chat live, two channels: B's output against both speakers \(withBoth), team alone \(withTeam), all alone \(withAll)")
        #expect(withBoth >= 0.7, "B's output does not follow the two channels mixed (envelope correlation \(withBoth))")
        #expect(withBoth > withTeam && withBoth > withAll, "B's output follows one channel better than both: one is missing from the mix")
        try await server.stop()
    }

    @Test func oneChannelOwnsTheMicrophoneAndBadNamesAreRefused() async throws {
        let server = try await RelayLiveTests.server()
        let (_, matches) = try await RelayLiveTests.match([server.url, server.url])
        matches[0].setVoiceAudio(source: try PCMPushSource(), sink: try PCMPullSink())
        let team = try matches[0].voiceChat(named: "team")
        let all = try matches[0].voiceChat(named: "all")
        team.isActive = true
        #expect(team.isActive && !all.isActive)
        all.isActive = true
        #expect(all.isActive && !team.isActive, "making a channel active must make the previous one inactive")
        all.isActive = false
        #expect(!all.isActive && !team.isActive)
        team.volume = 3
        #expect(team.volume == 1)
        #expect(matches[0].voiceChat(withName: "") == nil)
        #expect(throws: GKError.self) { try matches[0].voiceChat(named: String(repeating: "x", count: 40)) }
        try await server.stop()
    }
}
