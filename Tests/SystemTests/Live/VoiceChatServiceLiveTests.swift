import Foundation
import NetworkFaultProxy
@testable import OpenGameKit
@testable import OpenGameKitVoice
import Synchronization
import Testing
import VoiceTestSupport

/// GKVoiceChatService over a `GKMatch` on a real server: the match's reliable data carries the signalling, its
/// unreliable data (the relay) the real-time fallback.
@Suite(.serialized, .timeLimit(.minutes(3))) struct VoiceChatServiceLiveTests {
    /// A voice chat client whose channel is a match; it accepts every invitation.
    final class MatchVoiceClient: GKVoiceChatClient, GKMatchDelegate, Sendable {
        let match: GKMatch
        let playerID: String
        let service = GKVoiceChatService()
        private let state = Mutex((started: [String](), stopped: [String](), unreachablePort: UInt16?.none, realTimeSent: 0))

        init(_ match: GKMatch, playerID: String) {
            self.match = match
            self.playerID = playerID
            match.delegate = self
            service.client = self
        }

        var started: [String] { state.withLock { $0.started } }
        var stopped: [String] { state.withLock { $0.stopped } }
        var realTimeSent: Int { state.withLock { $0.realTimeSent } }
        /// Offers only 127.0.0.1:`port` as this device's address: no direct path answers.
        func offerUnreachableCandidates(port: UInt16) { state.withLock { $0.unreachablePort = port } }

        func participantID() -> String { playerID }

        func voiceChatService(_ service: GKVoiceChatService, send data: Data, toParticipantID participantID: String) {
            var data = data
            if let port = state.withLock({ $0.unreachablePort }), var signal = VoiceCallSignal(bytes: data), !signal.candidates.isEmpty {
                signal.candidates = [VoiceCallCandidate(address: [127, 0, 0, 1], port: port)]
                data = Data(signal.bytes)
            }
            try? match.send(Data([0]) + data, to: [participantID], with: .reliable)
        }

        func voiceChatService(_ service: GKVoiceChatService, sendRealTimeData data: Data, toParticipantID participantID: String) {
            state.withLock { $0.realTimeSent += 1 }
            try? match.send(Data([1]) + data, to: [participantID], with: .unreliable)
        }

        func voiceChatService(_ service: GKVoiceChatService, didStartWithParticipantID participantID: String) {
            state.withLock { $0.started.append(participantID) }
        }

        func voiceChatService(_ service: GKVoiceChatService, didStopWithParticipantID participantID: String, error: (any Error)?) {
            state.withLock { $0.stopped.append(participantID) }
        }

        func match(_ match: GKMatch, didReceive data: Data, fromPlayer playerID: String) {
            guard let tag = data.first else { return }
            let body = Data(data.dropFirst())
            if tag == 0 { service.receivedData(body, fromParticipantID: playerID) } else { service.receivedRealTimeData(body, fromParticipantID: playerID) }
        }

        func match(_ match: GKMatch, player playerID: String, didChange state: GKPlayerConnectionState) {}
        func match(_ match: GKMatch, didFailWithError error: (any Error)?) {}
    }

    /// Talks `speech` from A to B through a call A starts, then stops it; returns how B's output matches and the path.
    static func call(_ a: MatchVoiceClient, _ b: MatchVoiceClient, speech: String) async throws -> (similarity: Double, path: String?) {
        let input = try TestAudio.readAll(try WAVFileSource(path: speech))
        let microphone = ObservedVoiceSource(try WAVFileSource(path: speech))
        let output = TestAudio.temporaryPath("b.wav")
        let speaker = try ObservedWAVSink(path: output)
        a.service.setVoiceAudio(source: microphone, sink: try ObservedWAVSink(path: TestAudio.temporaryPath("a.wav")))
        b.service.setVoiceAudio(source: try PCMPushSource(), sink: speaker)
        let startedBefore = (a.started.count, b.started.count)
        try a.service.startVoiceChat(withParticipantID: b.playerID)
        try await waitUntil("both sides started", within: .seconds(30)) { a.started.count > startedBefore.0 && b.started.count > startedBefore.1 }
        let path = a.service.connectedPaths[b.playerID]
        try await waitUntil("A's speech was read", within: .seconds(60)) { microphone.hasEnded }
        let played = speaker.framesWritten
        try await waitUntil("B played 2 s more") { speaker.framesWritten >= played + 100 }
        let stoppedBefore = b.stopped.count
        a.service.stopVoiceChat(withParticipantID: b.playerID)
        try await waitUntil("B hears A stop") { b.stopped.count > stoppedBefore }
        try speaker.close()
        let heard = TestAudio.similarity(input: input, output: try TestAudio.readAll(try WAVFileSource(path: output)), maxDelay: 48_000)
        return (heard.envelope, path)
    }

    @Test(.enabled(if: TestAudio.hasEspeak, "needs espeak-ng (the test script installs it)"))
    func aCallOverAMatchGoesDirectOrThroughTheRelay() async throws {
        let server = try await RelayLiveTests.server()
        let (devices, matches) = try await RelayLiveTests.match([server.url, server.url])
        let a = MatchVoiceClient(matches[0], playerID: RelayLiveTests.id(devices[0]))
        let b = MatchVoiceClient(matches[1], playerID: RelayLiveTests.id(devices[1]))
        let speech = try TestAudio.speak("<speak>Over the match, can you hear me?<break time=\"500ms\"/>Blue team, go left.</speak>")

        let direct = try await Self.call(a, b, speech: speech)
        print("voice call over a match, direct: B against A's speech, envelope \(direct.similarity), path \(direct.path ?? "none")")
        #expect(direct.path?.hasPrefix("direct") == true)
        #expect(direct.similarity >= 0.8)

        // No direct path: the match's unreliable data, through the server's relay, carries the voice.
        a.offerUnreachableCandidates(port: 9)
        b.offerUnreachableCandidates(port: 9)
        let relayed = try await Self.call(a, b, speech: speech)
        print("voice call over a match, relayed: B against A's speech, envelope \(relayed.similarity), \(a.realTimeSent) datagrams")
        #expect(relayed.path == "real-time")
        #expect(relayed.similarity >= 0.8)
        #expect(a.realTimeSent > 50)
        for match in matches { match.disconnect() }
        try await server.stop()
    }
}
