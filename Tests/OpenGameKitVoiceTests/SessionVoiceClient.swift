import Dispatch
import Foundation
import LANTestSupport
import NetworkFaultProxy
import Synchronization
@testable import OpenGameKit
@testable import OpenGameKitVoice

/// A voice chat client over a `GKSession`, as the seed's example builds it: the session's peer id is the participant
/// id, its reliable data carries the signalling, its unreliable data the real-time fallback (a first byte tells the
/// two apart). It records what the service tells it, answers invitations as told, and can play a broken network.
final class SessionVoiceClient: GKVoiceChatClient, GKSessionDelegate, Sendable {
    /// What the service told the client.
    enum Event: Equatable, Sendable {
        case invited(String, callID: Int)
        case started(String)
        case notStarted(String, GKError.Code?)
        case stopped(String, GKError.Code?)
    }

    /// How the client answers invitations.
    enum Answer: Sendable {
        case accept, deny, ignore
    }

    private struct State {
        var events: [(event: Event, at: ContinuousClock.Instant)] = []
        var errors: [String] = []
        var answer = Answer.accept
        var delivering = true
        var unreachablePort: UInt16?
        var realTimeSent = 0
        var signalsSent: [Data] = []
    }

    let session: GKSession
    let service: GKVoiceChatService
    let queue = DispatchQueue(label: "SessionVoiceClient")
    private let state = Mutex(State())

    /// A session on `lo` named `name` in `sessionID`, with its own voice chat service whose client this is.
    init(_ name: String, sessionID: String) throws {
        session = try GKSession(sessionID: sessionID, displayName: name, sessionMode: .peer, interfaceName: LoopbackMulticast.interface)
        service = GKVoiceChatService()
        session.delegateQueue = queue
        session.delegate = self
        let service = service
        session.setDataReceiveHandler { data, peer, _ in
            guard let tag = data.first else { return }
            let body = Data(data.dropFirst())
            if tag == 0 { service.receivedData(body, fromParticipantID: peer) } else { service.receivedRealTimeData(body, fromParticipantID: peer) }
        }
        service.client = self
    }

    var peerID: String { session.peerID }
    var events: [Event] { state.withLock { $0.events.map(\.event) } }
    func has(_ event: Event) -> Bool { events.contains(event) }
    /// When `event` was told, if it was.
    func time(of event: Event) -> ContinuousClock.Instant? { state.withLock { $0.events.first { $0.event == event }?.at } }
    /// The call id of the last invitation from `participantID`.
    func callID(from participantID: String) -> Int? {
        events.reversed().lazy.compactMap { if case .invited(participantID, let id) = $0 { return id } else { return nil } }.first
    }
    /// How invitations are answered from now on.
    func answer(_ answer: Answer) { state.withLock { $0.answer = answer } }
    /// With false, nothing the service sends leaves this device any more (its network died).
    func deliver(_ delivering: Bool) { state.withLock { $0.delivering = delivering } }
    /// Rewrites every candidate this device offers to 127.0.0.1:`port` (a NAT that hides the real address): no
    /// direct path can answer.
    func offerUnreachableCandidates(port: UInt16) { state.withLock { $0.unreachablePort = port } }
    /// The signalling messages the service sent, as it sent them.
    var signalsSent: [Data] { state.withLock { $0.signalsSent } }
    /// How many real-time datagrams went through the session.
    var realTimeSent: Int { state.withLock { $0.realTimeSent } }

    // MARK: GKVoiceChatClient

    func participantID() -> String { session.peerID }

    func voiceChatService(_ service: GKVoiceChatService, send data: Data, toParticipantID participantID: String) {
        let (delivering, port) = state.withLock { ($0.delivering, $0.unreachablePort) }
        guard delivering else { return }
        state.withLock { $0.signalsSent.append(data) }
        var data = data
        if let port, var signal = VoiceCallSignal(bytes: data), !signal.candidates.isEmpty {
            signal.candidates = [VoiceCallCandidate(address: [127, 0, 0, 1], port: port)]
            data = Data(signal.bytes)
        }
        try? session.send(Data([0]) + data, toPeers: [participantID], with: .reliable)
    }

    func voiceChatService(_ service: GKVoiceChatService, sendRealTimeData data: Data, toParticipantID participantID: String) {
        guard state.withLock({ $0.delivering }) else { return }
        state.withLock { $0.realTimeSent += 1 }
        try? session.send(Data([1]) + data, toPeers: [participantID], with: .unreliable)
    }

    func voiceChatService(_ service: GKVoiceChatService, didStartWithParticipantID participantID: String) {
        record(.started(participantID))
    }

    func voiceChatService(_ service: GKVoiceChatService, didNotStartWithParticipantID participantID: String, error: (any Error)?) {
        record(.notStarted(participantID, (error as? GKError)?.code), error)
    }

    func voiceChatService(_ service: GKVoiceChatService, didStopWithParticipantID participantID: String, error: (any Error)?) {
        record(.stopped(participantID, (error as? GKError)?.code), error)
    }

    func voiceChatService(_ service: GKVoiceChatService, didReceiveInvitationFromParticipantID participantID: String, callID: Int) {
        record(.invited(participantID, callID: callID))
        switch state.withLock({ $0.answer }) {
        case .accept:
            do { try service.acceptCallID(callID) } catch { state.withLock { $0.errors.append("\(error)") } }
        case .deny: service.denyCallID(callID)
        case .ignore: break
        }
    }

    /// The messages of the errors the service gave.
    var errors: [String] { state.withLock { $0.errors } }

    private func record(_ event: Event, _ error: (any Error)? = nil) {
        state.withLock {
            $0.events.append((event, .now))
            if let error { $0.errors.append("\(error)") }
        }
    }

    // MARK: GKSessionDelegate

    func session(_ session: GKSession, didReceiveConnectionRequestFromPeer peerID: String) {
        try? session.acceptConnection(fromPeer: peerID)
    }

    /// Connects this session with `other` (this one asks, the other accepts).
    func connect(to other: SessionVoiceClient) async throws {
        session.isAvailable = true
        other.session.isAvailable = true
        try await waitUntil("\(session.displayName) finds \(other.session.displayName)") { session.peers(with: .available).contains(other.peerID) }
        session.connect(toPeer: other.peerID, withTimeout: 5)
        try await waitUntil("\(session.displayName) and \(other.session.displayName) connect") {
            session.peers(with: .connected).contains(other.peerID) && other.session.peers(with: .connected).contains(peerID)
        }
    }
}

/// A client with no real-time channel: it forwards everything to a ``SessionVoiceClient`` except
/// `sendRealTimeData`, which it does not implement (the protocol's default answers for it).
final class SignallingOnlyClient: GKVoiceChatClient, Sendable {
    let inner: SessionVoiceClient

    init(_ inner: SessionVoiceClient) {
        self.inner = inner
        inner.service.client = self
    }

    func participantID() -> String { inner.participantID() }
    func voiceChatService(_ service: GKVoiceChatService, send data: Data, toParticipantID participantID: String) {
        inner.voiceChatService(service, send: data, toParticipantID: participantID)
    }
    func voiceChatService(_ service: GKVoiceChatService, didStartWithParticipantID participantID: String) {
        inner.voiceChatService(service, didStartWithParticipantID: participantID)
    }
    func voiceChatService(_ service: GKVoiceChatService, didNotStartWithParticipantID participantID: String, error: (any Error)?) {
        inner.voiceChatService(service, didNotStartWithParticipantID: participantID, error: error)
    }
    func voiceChatService(_ service: GKVoiceChatService, didStopWithParticipantID participantID: String, error: (any Error)?) {
        inner.voiceChatService(service, didStopWithParticipantID: participantID, error: error)
    }
    func voiceChatService(_ service: GKVoiceChatService, didReceiveInvitationFromParticipantID participantID: String, callID: Int) {
        inner.voiceChatService(service, didReceiveInvitationFromParticipantID: participantID, callID: callID)
    }
}
