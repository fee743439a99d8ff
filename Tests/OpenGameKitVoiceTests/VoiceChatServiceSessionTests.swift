import Crypto
import Foundation
import GameCenterProtocol
import LANTestSupport
import NetworkFaultProxy
import NIOCore
import NIOPosix
import Synchronization
import Testing
@testable import OpenGameKit
@testable import OpenGameKitVoice
import VoiceTestSupport

/// GKVoiceChatService between devices joined by `GKSession`s on loopback, as the seed's "Adding Voice Chat" builds
/// it: real speech (espeak-ng) and tones into WAV microphones, the real codec and key agreement, WAV speakers.
@Suite(
    "GKVoiceChatService over GKSession", .serialized, .timeLimit(.minutes(3)),
    .enabled(if: LoopbackMulticast.isAvailable, Comment(rawValue: LoopbackMulticast.skipMessage)))
struct VoiceChatServiceSessionTests {
    /// Two devices whose sessions are connected.
    static func pair(_ prefix: String) async throws -> (a: SessionVoiceClient, b: SessionVoiceClient) {
        let id = uniqueSessionID(prefix)
        let a = try SessionVoiceClient("Alice", sessionID: id), b = try SessionVoiceClient("Bob", sessionID: id)
        try await a.connect(to: b)
        return (a, b)
    }

    /// Two connected devices that leave invitations unanswered, with silent microphones and speakers to files.
    static func unansweringPair(_ prefix: String) async throws -> (a: SessionVoiceClient, b: SessionVoiceClient) {
        let (a, b) = try await pair(prefix)
        for client in [a, b] {
            client.answer(.ignore)
            client.service.setVoiceAudio(source: try PCMPushSource(), sink: try ObservedWAVSink(path: TestAudio.temporaryPath("x.wav")))
        }
        return (a, b)
    }

    /// A fresh random session id, so tests never see each other.
    static func uniqueSessionID(_ prefix: String) -> String { prefix + String(UInt32.random(in: 10_000...99_999)) }

    /// Waits until every source was read to its end, then until `sink` played 2 s more (the jitter buffer drained).
    static func waitUntilPlayed(_ sources: [ObservedVoiceSource], seconds: Double, into sink: ObservedWAVSink) async throws {
        try await waitUntil("the microphones were read to their end", within: .seconds(seconds + 30)) { sources.allSatisfy(\.hasEnded) }
        let played = sink.framesWritten
        try await waitUntil("the speakers played 2 s more") { sink.framesWritten >= played + 100 }
    }

    static func samples(_ path: String) throws -> [Int16] { try TestAudio.readAll(try WAVFileSource(path: path)) }

    static func rms(_ samples: some Collection<Int16>) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))).squareRoot()
    }

    /// A UDP port nobody listens on.
    static func deadPort() throws -> UInt16 {
        let channel = try DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        let port = UInt16(channel.localAddress!.port!)
        try channel.close().wait()
        return port
    }

    @Test(.enabled(if: TestAudio.hasEspeak, "needs espeak-ng (the test script installs it)"))
    func speechOneWayAndAToneTheOtherArriveOnADirectPathAndEitherSideStops() async throws {
        let (a, b) = try await Self.pair("talk")
        let speech = try TestAudio.speak()
        let speechSamples = try Self.samples(speech)
        let seconds = Double(speechSamples.count) / Double(VoiceFormat.sampleRate)
        let tone = TestAudio.pulsedTone(frequency: 440, seconds: seconds)
        let micA = ObservedVoiceSource(try WAVFileSource(path: speech))
        let micB = ObservedVoiceSource(try WAVFileSource(path: try TestAudio.wavFile(tone, name: "tone.wav")))
        let outA = TestAudio.temporaryPath("a.wav"), outB = TestAudio.temporaryPath("b.wav")
        let speakerA = try ObservedWAVSink(path: outA), speakerB = try ObservedWAVSink(path: outB)
        a.service.setVoiceAudio(source: micA, sink: speakerA)
        b.service.setVoiceAudio(source: micB, sink: speakerB)

        let start = ContinuousClock.now
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("both sides started") { a.has(.started(b.peerID)) && b.has(.started(a.peerID)) }
        let setup = try #require(a.time(of: .started(b.peerID))) - start
        print("voice call: startVoiceChat → didStart in \(setup) (direct)")
        #expect(b.events.first == .invited(a.peerID, callID: 1), "\(b.events)")
        #expect(a.service.connectedPaths[b.peerID]?.hasPrefix("direct") == true, "\(a.service.connectedPaths)")
        #expect(b.service.connectedPaths[a.peerID]?.hasPrefix("direct") == true, "\(b.service.connectedPaths)")

        try await Self.waitUntilPlayed([micA, micB], seconds: seconds, into: speakerB)
        b.service.stopVoiceChat(withParticipantID: a.peerID)
        try await waitUntil("both hear the call stop") { a.has(.stopped(b.peerID, nil)) && b.has(.stopped(a.peerID, nil)) }
        try speakerA.close()
        try speakerB.close()

        let heardByB = TestAudio.similarity(input: speechSamples, output: try Self.samples(outB), maxDelay: 48_000)
        let heardByA = TestAudio.similarity(input: tone, output: try Self.samples(outA), maxDelay: 48_000)
        print("voice call: B against A's speech \(heardByB); A against B's tone \(heardByA)")
        #expect(heardByB.envelope >= 0.8, "B's output does not follow A's speech: \(heardByB)")
        #expect(heardByA.envelope >= 0.8, "A's output does not follow B's tone: \(heardByA)")
        // Probes that arrive before the acceptance cannot be opened yet and are dropped; signalling is never refused.
        print("voice call: datagrams dropped \(a.service.statistics.datagramsDropped) and \(b.service.statistics.datagramsDropped)")
        #expect(a.service.statistics.signalsRefused == 0 && b.service.statistics.signalsRefused == 0)
        #expect(a.service.connectedPaths.isEmpty && b.service.connectedPaths.isEmpty)
    }

    @Test func aDeniedOrUnansweredCallDoesNotStartAndCallsAreChecked() async throws {
        let (a, b) = try await Self.pair("deny")
        #expect(throws: GKError.self) { try a.service.startVoiceChat(withParticipantID: a.peerID) }
        b.answer(.deny)
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("A hears B declined") { a.has(.notStarted(b.peerID, .userDenied)) }
        #expect(b.events == [.invited(a.peerID, callID: 1)])

        // Unanswered: the caller gives up after its invitation timeout and withdraws the invitation.
        a.service.timeouts.invitation = .seconds(1)
        b.answer(.ignore)
        let start = ContinuousClock.now
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        do {
            try a.service.startVoiceChat(withParticipantID: b.peerID)
            Issue.record("a second call with the same participant started")
        } catch let error as GKError {
            #expect(error.code == .invalidParameter && error.message.contains("already under way"), "\(error)")
        }
        try await waitUntil("A gives up, and B hears the invitation withdrawn") {
            a.has(.notStarted(b.peerID, .communicationsFailure)) && b.has(.notStarted(a.peerID, .cancelled))
        }
        let waited = try #require(a.time(of: .notStarted(b.peerID, .communicationsFailure))) - start
        #expect(waited >= .seconds(1) && waited < .seconds(3), "the invitation expired after \(waited); its timeout is 1 s")
        #expect(a.errors.last?.contains("did not answer") == true, "\(a.errors)")
        let withdrawn = try #require(b.callID(from: a.peerID))
        #expect(withdrawn == 2)
        do {
            try b.service.acceptCallID(withdrawn)
            Issue.record("a withdrawn invitation was accepted")
        } catch let error as GKError {
            #expect(error.code == .invalidParameter, "\(error)")
        }

        // The callee's own timeout: the invitation expires there, and the caller hears it was not taken.
        a.service.timeouts.invitation = .seconds(30)
        b.service.timeouts.invitation = .seconds(1)
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("B's invitation expires, and A hears the call ended") {
            b.has(.notStarted(a.peerID, .communicationsFailure)) && a.has(.notStarted(b.peerID, .cancelled))
        }
        #expect(b.errors.last?.contains("was not answered") == true, "\(b.errors)")
        #expect(!a.events.contains(.started(b.peerID)) && !b.events.contains(.started(a.peerID)))
    }

    @Test func twoSidesCallingEachOtherAtOnceMakeOneCall() async throws {
        let (a, b) = try await Self.unansweringPair("glare")
        // Both invite at once: the invitations cross, or B's call finds A's invitation already ringing.
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try b.service.startVoiceChat(withParticipantID: a.peerID)
        do {
            try await waitUntil("both sides started") { a.has(.started(b.peerID)) && b.has(.started(a.peerID)) }
        } catch {
            func signals(_ client: SessionVoiceClient) -> [String] {
                client.signalsSent.compactMap { VoiceCallSignal(bytes: $0) }.map {
                    "\($0.kind) \($0.token.prefix(2).map { String($0) }.joined(separator: "."))"
                }
            }
            Issue.record("A: \(a.events) \(a.errors) sent \(signals(a)); B: \(b.events) \(b.errors) sent \(signals(b))")
            throw error
        }
        try await Task.sleep(for: .milliseconds(300))
        // One call, started on both sides; nobody had to answer, nothing failed.
        func outcomes(_ client: SessionVoiceClient) -> [SessionVoiceClient.Event] {
            client.events.filter { if case .invited = $0 { false } else { true } }
        }
        #expect(outcomes(a) == [.started(b.peerID)] && outcomes(b) == [.started(a.peerID)], "\(a.events) \(b.events)")
        #expect(a.errors.isEmpty && b.errors.isEmpty, "\(a.errors) \(b.errors)")
        #expect(a.service.connectedPaths.count == 1 && b.service.connectedPaths.count == 1)
        a.service.stopVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("B hears A stop") { b.has(.stopped(a.peerID, nil)) }
    }

    /// Calling back a participant whose invitation rings answers it: one call.
    @Test func callingBackARingingParticipantAnswersTheInvitation() async throws {
        let (a, b) = try await Self.unansweringPair("callback")
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("B is invited") { b.callID(from: a.peerID) != nil }
        try b.service.startVoiceChat(withParticipantID: a.peerID)
        try await waitUntil("both sides started") { a.has(.started(b.peerID)) && b.has(.started(a.peerID)) }
        #expect(a.events == [.started(b.peerID)], "A was never invited back: \(a.events)")
        #expect(b.events.count == 2 && b.events.last == .started(a.peerID), "\(b.events)")
        a.service.stopVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("B hears A stop") { b.has(.stopped(a.peerID, nil)) }
    }

    /// A microphone whose level the test sets: a looped WAV file at `gain`.
    final class ScaledSource: VoiceAudioSource, @unchecked Sendable {
        private let lock = NSLock()
        private let inner: WAVFileSource
        private var gain: Double = 1

        init(_ path: String) throws { inner = try WAVFileSource(path: path, loop: true) }
        func set(gain: Double) { lock.withLock { self.gain = gain } }

        func readFrame() throws(VoiceError) -> VoiceFrameRead {
            let gain = lock.withLock { self.gain }
            guard case .frame(let samples) = try inner.readFrame() else { return .pending }
            return .frame(samples.map { Int16(Double($0) * gain) })
        }
    }

    @Test func metersFollowTheLevelsAndAMutedMicrophoneIsSilentOnTheOtherSide() async throws {
        let (a, b) = try await Self.pair("meter")
        // A tone at 0.3 of full scale: its loudest frames are at 20·log10(0.3/√2) = −13.5 dB.
        let micA = try ScaledSource(try TestAudio.wavFile(TestAudio.pulsedTone(frequency: 500, seconds: 4), name: "tone.wav"))
        a.service.setVoiceAudio(source: micA, sink: try ObservedWAVSink(path: TestAudio.temporaryPath("a.wav")))
        b.service.setVoiceAudio(source: try PCMPushSource(), sink: try ObservedWAVSink(path: TestAudio.temporaryPath("b.wav")))
        a.service.isInputMeteringEnabled = true
        b.service.isOutputMeteringEnabled = true
        #expect(a.service.inputMeterLevel == -120)
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("both sides started") { a.has(.started(b.peerID)) && b.has(.started(a.peerID)) }

        /// The loudest meter reading over 2 s, every 10 ms.
        func loudest(_ meter: @escaping () -> Float) async throws -> Float {
            var loudest: Float = -200
            for _ in 0..<200 {
                loudest = max(loudest, meter())
                try await Task.sleep(for: .milliseconds(10))
            }
            return loudest
        }
        let fullInput = try await loudest { a.service.inputMeterLevel }
        let fullOutput = try await loudest { b.service.outputMeterLevel }
        micA.set(gain: 0.1)
        try await Task.sleep(for: .milliseconds(100))
        let quietInput = try await loudest { a.service.inputMeterLevel }
        print("voice call meters: input \(fullInput) dB at full level, \(quietInput) dB at a tenth; B's output \(fullOutput) dB")
        #expect(abs(fullInput + 13.5) < 1, "the input meter read \(fullInput) dB for a tone whose level is −13.5 dB")
        #expect(abs((fullInput - quietInput) - 20) < 1, "a tenth of the level (−20 dB) moved the input meter from \(fullInput) to \(quietInput) dB")
        #expect(fullOutput > -40, "B's output meter read \(fullOutput) dB while A spoke")

        micA.set(gain: 1)
        a.service.isMicrophoneMuted = true
        try await Task.sleep(for: .milliseconds(500))
        let mutedOutput = try await loudest { b.service.outputMeterLevel }
        let mutedInput = try await loudest { a.service.inputMeterLevel }
        print("voice call meters, A muted: B's output \(mutedOutput) dB, A's input \(mutedInput) dB")
        #expect(mutedOutput < fullOutput - 30, "B still heard A (output \(mutedOutput) dB against \(fullOutput) dB) while A was muted")
        #expect(mutedInput > -30, "muting stopped the input meter (\(mutedInput) dB); it measures before the mute")
        a.service.isMicrophoneMuted = false
        try await Task.sleep(for: .milliseconds(500))
        let unmuted = try await loudest { b.service.outputMeterLevel }
        b.service.remoteParticipantVolume = 0.1
        try await Task.sleep(for: .milliseconds(100))
        let softer = try await loudest { b.service.outputMeterLevel }
        b.service.remoteParticipantVolume = 1
        try await Task.sleep(for: .milliseconds(100))
        let again = try await loudest { b.service.outputMeterLevel }
        // A's automatic gain may still be settling after the unmute: the full-volume readings before and after the
        // softer one bracket it, and their mean cancels a steady drift.
        let full = (unmuted + again) / 2
        print("voice call meters: B's output unmuted \(unmuted) dB, then at a tenth of the volume \(softer) dB, then at full volume \(again) dB")
        #expect(abs((full - softer) - 20) < 3, "a tenth of the volume moved B's output from \(unmuted) and \(again) to \(softer) dB")
        a.service.stopVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("B hears A stop") { b.has(.stopped(a.peerID, nil)) }
    }

    @Test(.enabled(if: TestAudio.hasEspeak, "needs espeak-ng (the test script installs it)"))
    func withoutADirectPathVoiceGoesThroughTheClientsRealTimeChannelOrTheCallFails() async throws {
        let (a, b) = try await Self.pair("fallback")
        let dead = try Self.deadPort()
        a.offerUnreachableCandidates(port: dead)
        b.offerUnreachableCandidates(port: dead)
        let speech = try TestAudio.speak("<speak>One, two, three. Can you hear me through the session?</speak>")
        let speechSamples = try Self.samples(speech)
        let micA = ObservedVoiceSource(try WAVFileSource(path: speech))
        let outB = TestAudio.temporaryPath("b.wav")
        let speakerB = try ObservedWAVSink(path: outB)
        a.service.setVoiceAudio(source: micA, sink: try ObservedWAVSink(path: TestAudio.temporaryPath("a.wav")))
        b.service.setVoiceAudio(source: try PCMPushSource(), sink: speakerB)
        let start = ContinuousClock.now
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("both sides started") { a.has(.started(b.peerID)) && b.has(.started(a.peerID)) }
        let setup = try #require(a.time(of: .started(b.peerID))) - start
        print("voice call: startVoiceChat → didStart in \(setup) (real-time fallback)")
        #expect(setup >= .seconds(2), "the fallback came after \(setup), before the 2 s of probing")
        #expect(a.service.connectedPaths[b.peerID] == "real-time" && b.service.connectedPaths[a.peerID] == "real-time")
        try await Self.waitUntilPlayed([micA], seconds: Double(speechSamples.count) / 48_000, into: speakerB)
        a.service.stopVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("B hears A stop") { b.has(.stopped(a.peerID, nil)) }
        try speakerB.close()
        let heard = TestAudio.similarity(input: speechSamples, output: try Self.samples(outB), maxDelay: 48_000)
        print("voice call through the session's unreliable data: B against A's speech \(heard), \(a.realTimeSent) datagrams")
        #expect(heard.envelope >= 0.8, "B's output does not follow A's speech: \(heard)")
        #expect(a.realTimeSent > 50)

        // A client without a real-time channel: the call fails, saying why.
        let signallingOnly = SignallingOnlyClient(a)
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("A hears the call could not start") { a.has(.notStarted(b.peerID, .communicationsFailure)) }
        #expect(a.errors.last?.contains("sendRealTimeData") == true, "\(a.errors)")
        try await waitUntil("B's side of it ends too") { b.service.connectedPaths.isEmpty && b.events.count >= 4 }
        _ = signallingOnly
    }

    @Test func badSignallingAndForgedMediaAreRefusedWithoutDisturbingTheCall() async throws {
        let (a, b) = try await Self.pair("hostile")
        a.service.setVoiceAudio(source: try PCMPushSource(), sink: try ObservedWAVSink(path: TestAudio.temporaryPath("a.wav")))
        b.service.setVoiceAudio(source: try PCMPushSource(), sink: try ObservedWAVSink(path: TestAudio.temporaryPath("b.wav")))
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("both sides started") { a.has(.started(b.peerID)) && b.has(.started(a.peerID)) }
        let invite = try #require(a.signalsSent.first)
        let accept = try #require(b.signalsSent.first.flatMap { VoiceCallSignal(bytes: $0) })
        let token = try #require(VoiceCallSignal(bytes: invite)).token

        b.service.receivedData(Data("not voice chat data".utf8), fromParticipantID: a.peerID)
        b.service.receivedData(Data(), fromParticipantID: a.peerID)
        b.service.receivedData(invite.prefix(30), fromParticipantID: a.peerID)
        b.service.receivedData(invite, fromParticipantID: a.peerID)  // replayed
        b.service.receivedData(Data(VoiceCallSignal(kind: .hangUp, token: token).bytes), fromParticipantID: "intruder")  // a third party
        b.service.receivedData(Data(VoiceCallSignal(kind: .hangUp, token: Array(repeating: 7, count: 16)).bytes), fromParticipantID: a.peerID)
        a.service.receivedData(Data(accept.bytes), fromParticipantID: b.peerID)  // an acceptance for no call being invited
        #expect(b.service.statistics.signalsRefused == 6, "\(b.service.statistics)")
        #expect(a.service.statistics.signalsRefused == 1, "\(a.service.statistics)")
        #expect(b.events == [.invited(a.peerID, callID: 1), .started(a.peerID)], "a refused message changed the call: \(b.events)")

        // Media: garbage, a datagram sealed with the wrong key, and real-time data that does not authenticate.
        let port = try #require(accept.candidates.first?.port)
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: Int(port))
        let forger = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let before = b.service.statistics.datagramsDropped
        var wrongKey = VoiceCallSealer(cipher: ChaChaPolyCipher(key: .init(size: .bits256)), receiverID: 1)
        for bytes in [Array(repeating: UInt8(0x42), count: 200), wrongKey.seal(.voice, [1, 2, 3])!] {
            try await forger.writeAndFlush(AddressedEnvelope(remoteAddress: target, data: forger.allocator.buffer(bytes: bytes)))
        }
        b.service.receivedRealTimeData(Data(repeating: 9, count: 80), fromParticipantID: a.peerID)
        try await waitUntil("B dropped and counted the forged datagrams") { b.service.statistics.datagramsDropped >= before + 3 }
        try await forger.close()
        try await Task.sleep(for: .seconds(1))
        #expect(b.events == [.invited(a.peerID, callID: 1), .started(a.peerID)])
        #expect(a.events == [.started(b.peerID)])
        #expect(b.service.connectedPaths[a.peerID]?.hasPrefix("direct") == true)
        a.service.stopVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("B hears A stop") { b.has(.stopped(a.peerID, nil)) }
    }

    @Test func aParticipantThatVanishesEndsTheCallWithinTheSilenceTimeout() async throws {
        let (a, b) = try await Self.pair("vanish")
        for client in [a, b] {
            client.service.timeouts.silence = .seconds(1)
            client.service.setVoiceAudio(source: try PCMPushSource(), sink: try ObservedWAVSink(path: TestAudio.temporaryPath("x.wav")))
        }
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try await waitUntil("both sides started") { a.has(.started(b.peerID)) && b.has(.started(a.peerID)) }
        // Silent microphones: only the keep-alives hold the call up, for longer than the timeout.
        try await Task.sleep(for: .seconds(2))
        #expect(a.events == [.started(b.peerID)] && b.events.count == 2)
        // B's network dies: its hang-up never leaves, its socket closes.
        b.deliver(false)
        let gone = ContinuousClock.now
        b.service.stopVoiceChat(withParticipantID: a.peerID)
        try await waitUntil("A gives up on B") { a.has(.stopped(b.peerID, .communicationsFailure)) }
        let waited = try #require(a.time(of: .stopped(b.peerID, .communicationsFailure))) - gone
        print("voice call: A ended the call \(waited) after B vanished (timeout 1 s)")
        // The timeout counts from the last keep-alive heard, at most half a second before B went.
        #expect(waited >= .milliseconds(450) && waited < .seconds(3), "A ended the call \(waited) after B vanished")
        #expect(a.errors.last?.contains("nothing was heard") == true, "\(a.errors)")
    }

    @Test(.enabled(if: TestAudio.hasEspeak, "needs espeak-ng (the test script installs it)"))
    func severalCallsAtOnceMixOnOutputAndTheMicrophoneFeedsThemAll() async throws {
        let id = Self.uniqueSessionID("three")
        let a = try SessionVoiceClient("Alice", sessionID: id), b = try SessionVoiceClient("Bob", sessionID: id)
        let c = try SessionVoiceClient("Carol", sessionID: id)
        try await a.connect(to: b)
        try await a.connect(to: c)
        let speech = try TestAudio.speak()
        let speechSamples = try Self.samples(speech)
        let seconds = Double(speechSamples.count) / Double(VoiceFormat.sampleRate)
        let low = TestAudio.pulsedTone(frequency: 300, seconds: seconds), high = TestAudio.pulsedTone(frequency: 1_200, onMilliseconds: 300, seconds: seconds)
        let micA = ObservedVoiceSource(try WAVFileSource(path: speech))
        let micB = ObservedVoiceSource(try WAVFileSource(path: try TestAudio.wavFile(low, name: "low.wav")))
        let micC = ObservedVoiceSource(try WAVFileSource(path: try TestAudio.wavFile(high, name: "high.wav")))
        let outputs = (0..<3).map { TestAudio.temporaryPath("out\($0).wav") }
        let speakers = try outputs.map { try ObservedWAVSink(path: $0) }
        for (client, mic, speaker) in [(a, micA, speakers[0]), (b, micB, speakers[1]), (c, micC, speakers[2])] {
            client.service.setVoiceAudio(source: mic, sink: speaker)
        }
        try a.service.startVoiceChat(withParticipantID: b.peerID)
        try a.service.startVoiceChat(withParticipantID: c.peerID)
        try await waitUntil("A's two calls started") { a.has(.started(b.peerID)) && a.has(.started(c.peerID)) }
        try await Self.waitUntilPlayed([micA, micB, micC], seconds: seconds, into: speakers[0])
        a.service.stopVoiceChat(withParticipantID: b.peerID)
        a.service.stopVoiceChat(withParticipantID: c.peerID)
        for speaker in speakers { try speaker.close() }

        for (name, output) in [("B", outputs[1]), ("C", outputs[2])] {
            let heard = TestAudio.similarity(input: speechSamples, output: try Self.samples(output), maxDelay: 48_000)
            print("voice calls: \(name) against A's speech \(heard)")
            #expect(heard.envelope >= 0.8, "\(name) does not hear A's microphone: \(heard)")
        }
        // A's output carries both tones: the energy at 300 Hz and at 1,200 Hz stands far above a frequency neither has.
        let mixed = try Self.samples(outputs[0])
        let at300 = Self.power(mixed, frequency: 300), at1200 = Self.power(mixed, frequency: 1_200), at700 = Self.power(mixed, frequency: 700)
        print("voice calls: A's mixed output, power at 300 Hz \(at300), 1,200 Hz \(at1200), 700 Hz \(at700)")
        #expect(at300 > 100 * at700 && at1200 > 100 * at700, "A's output lacks one of the tones (300 Hz \(at300), 1,200 Hz \(at1200), 700 Hz \(at700))")
    }

    /// The power of `samples` (48 kHz) at `frequency`, by the Goertzel algorithm over the whole signal.
    static func power(_ samples: [Int16], frequency: Double) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(VoiceFormat.sampleRate))
        var previous = 0.0, beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        return (previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious) / Double(max(samples.count, 1))
    }
}
