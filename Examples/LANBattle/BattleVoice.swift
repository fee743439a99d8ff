import Foundation
import OpenGameKit
import OpenGameKitVoice
import Synchronization

/// The players talk while they battle: the seed's "Adding Voice Chat" over the battle's own `GKSession`. The
/// session's reliable data carries the voice chat service's signalling, its unreliable data the voice when no direct
/// UDP path answers; a first byte tells them from the battle's JSON messages (which start with `{`).
final class BattleVoice: GKVoiceChatClient, Sendable {
    /// The first byte of the voice chat service's signalling data on the session.
    static let signallingTag: UInt8 = 1
    /// The first byte of its real-time data.
    static let realTimeTag: UInt8 = 2

    private struct State {
        var startedAt: ContinuousClock.Instant?
        var connected = false
        var ended = false
    }

    let session: GKSession
    let service = GKVoiceChatService.default
    private let microphone: BattleMicrophone?
    private let state = Mutex(State())

    /// Voice over `session`, from the WAV file `input` and into the WAV file `output` when given (otherwise the
    /// system's microphone and speakers), through UDP `port` for the direct path (0: any).
    init(session: GKSession, input: String?, output: String?, port: UInt16) throws {
        self.session = session
        microphone = try input.map { BattleMicrophone(try WAVFileSource(path: $0)) }
        let sink = try output.map { try WAVFileSink(path: $0) }
        service.setVoiceAudio(source: microphone, sink: sink)
        service.mediaPort = port
        service.client = self
    }

    /// Whether `data` from the session is the voice chat's; if so, hands it to the service.
    func receive(_ data: Data, from peerID: String) -> Bool {
        switch data.first {
        case Self.signallingTag: service.receivedData(data.dropFirst(), fromParticipantID: peerID)
        case Self.realTimeTag: service.receivedRealTimeData(data.dropFirst(), fromParticipantID: peerID)
        default: return false
        }
        return true
    }

    /// Calls `opponentID`.
    func call(_ opponentID: String) {
        state.withLock { $0.startedAt = .now }
        do {
            try service.startVoiceChat(withParticipantID: opponentID)
        } catch {
            LANBattle.say("Voice chat could not start: \(error)")
        }
    }

    /// Whether the microphone file has been read to its end (never, for the system microphone).
    var inputEnded: Bool { microphone?.ended ?? false }
    /// Whether the call has ended (or never started).
    var ended: Bool { state.withLock { $0.ended } }
    /// Whether the call is connected.
    var connected: Bool { state.withLock { $0.connected } }

    /// Ends the call with `opponentID`.
    func hangUp(_ opponentID: String) {
        service.stopVoiceChat(withParticipantID: opponentID)
    }

    // MARK: GKVoiceChatClient

    func participantID() -> String { session.peerID }

    func voiceChatService(_ service: GKVoiceChatService, send data: Data, toParticipantID participantID: String) {
        try? session.send(Data([Self.signallingTag]) + data, toPeers: [participantID], with: .reliable)
    }

    func voiceChatService(_ service: GKVoiceChatService, sendRealTimeData data: Data, toParticipantID participantID: String) {
        try? session.send(Data([Self.realTimeTag]) + data, toPeers: [participantID], with: .unreliable)
    }

    func voiceChatService(_ service: GKVoiceChatService, didStartWithParticipantID participantID: String) {
        let since = state.withLock { state -> ContinuousClock.Instant? in
            state.connected = true
            return state.startedAt
        }
        let name = session.displayName(forPeer: participantID) ?? participantID
        let after = since.map { " after \(Int(($0.duration(to: .now)) / .milliseconds(1))) ms" } ?? ""
        LANBattle.say("Voice chat with \(name) started\(after).")
    }

    func voiceChatService(_ service: GKVoiceChatService, didNotStartWithParticipantID participantID: String, error: (any Error)?) {
        state.withLock { $0.ended = true }
        LANBattle.say("Voice chat did not start: \(error.map { "\($0)" } ?? "no reason given")")
    }

    func voiceChatService(_ service: GKVoiceChatService, didStopWithParticipantID participantID: String, error: (any Error)?) {
        state.withLock {
            $0.ended = true
            $0.connected = false
        }
        LANBattle.say("Voice chat ended\(error.map { ": \($0)" } ?? ".")")
    }
}

/// A WAV microphone that notes when its file has been read to the end.
final class BattleMicrophone: VoiceAudioSource, @unchecked Sendable {
    // `@unchecked Sendable`: the source is read only by the voice chat service's audio thread; `ended` is atomic.
    private let source: WAVFileSource
    private let end = Atomic(false)

    init(_ source: WAVFileSource) {
        self.source = source
    }

    /// Whether the file has been read to its end.
    var ended: Bool { end.load(ordering: .acquiring) }

    func readFrame() throws(VoiceError) -> VoiceFrameRead {
        let read = try source.readFrame()
        if read == .end { end.store(true, ordering: .releasing) }
        return read
    }
}
