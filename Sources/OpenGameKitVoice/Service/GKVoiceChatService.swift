import Foundation
import GameCenterProtocol
import Logging
import NIOCore
import OpenGameKit
import Synchronization

/// Two-party voice over a connection the game already has (Game Kit's `GKVoiceChatService`): the seed's In-Game
/// Voice.
///
/// The game sets a ``client`` that names this device (``GKVoiceChatClient/participantID()``) and carries the
/// service's signalling data to the other participants; the game passes what arrives for the service to
/// ``receivedData(_:fromParticipantID:)``. ``startVoiceChat(withParticipantID:)`` invites; the other side's client
/// hears ``GKVoiceChatClient/voiceChatService(_:didReceiveInvitationFromParticipantID:callID:)`` and answers with
/// ``acceptCallID(_:)`` or ``denyCallID(_:)``.
///
/// Once accepted, the two services agree a key over the game's channel (X25519; ChaCha20-Poly1305 on every
/// datagram, nothing in clear) and look for a **direct UDP path**: each offers its IPv4 addresses and port, both
/// probe every 100 ms, and the first probe answered picks the path. When none answers within
/// ``Timeouts/directPath`` (2 s), voice goes through the client's
/// ``GKVoiceChatClient/voiceChatService(_:sendRealTimeData:toParticipantID:)``, or the call fails with
/// `communicationsFailure` when the client has no such channel. Then ``GKVoiceChatClient/voiceChatService(_:didStartWithParticipantID:)``.
///
/// The audio engine is the match voice's (Opus with FEC and DTX, speexdsp noise suppression and echo cancellation,
/// the jitter buffer, the mixer): the microphone feeds every call, and every call's voice is mixed into one output.
/// Where audio comes from and goes to: ``setVoiceAudio(source:sink:)`` (the system's default devices unless set).
///
/// Timeouts (``timeouts``): an invitation unanswered for 30 s fails on both sides; a call silent for 5 s (no voice
/// and none of the half-second keep-alives) ends with `communicationsFailure`.
public final class GKVoiceChatService: Sendable {
    /// How long each stage may take.
    public struct Timeouts: Sendable, Equatable {
        /// How long an invitation waits for an answer (30 s).
        public var invitation: Duration = .seconds(30)
        /// How long the services probe for a direct UDP path before falling back to the client's real-time channel
        /// (2 s).
        public var directPath: Duration = .seconds(2)
        /// How long a connected call may hear nothing from the other side before it ends (5 s).
        public var silence: Duration = .seconds(5)

        /// The defaults.
        public init() {}
    }

    /// What the service refused, counted since it was made.
    public struct Statistics: Sendable, Equatable {
        /// Signalling messages refused: malformed, replayed, for an unknown call, or from someone not in the call.
        public var signalsRefused = 0
        /// Media datagrams dropped: not addressed to a call, not authenticated, or replayed.
        public var datagramsDropped = 0
    }

    /// The service every game uses (the seed's `defaultVoiceChatService`).
    public static let `default` = GKVoiceChatService()

    /// Everything the service changes, under one `Mutex`.
    private struct State {
        /// The game's side, held weakly.
        weak var client: (any GKVoiceChatClient)?
        /// The type of the client the game set, until it sets nil: a client gone while this is set was released by
        /// the game, not taken away.
        var clientType: String?
        /// Whether that release was logged.
        var releaseReported = false
        /// The calls: what they do next is decided there.
        var calls = VoiceCallState()
        /// The UDP socket.
        var socket = Socket()
        /// The microphone, the speakers and what lies between.
        var audio: VoiceCallAudio
        /// Effects decided and not yet delivered, in the order they were decided.
        var queuedEffects: [VoiceCallEffect] = []
        /// Whether a thread is delivering ``queuedEffects`` (it delivers those queued meanwhile too).
        var deliveringEffects = false
        /// Whether the 20 ms clock runs.
        var running = false
    }

    /// The UDP socket direct paths use: opened on first need, closed with the last call.
    private struct Socket {
        /// The port it opens on (0: one the system picks).
        var port: UInt16 = 0
        /// The socket, while open.
        var open: VoiceCallSocket?

        /// This device's candidates; opens the socket first if it is not open, handing what arrives to `receive`.
        mutating func candidates(receive: @escaping @Sendable ([UInt8], SocketAddress) -> Void) throws -> [VoiceCallCandidate] {
            if let open { return open.candidates() }
            do {
                let opened = try VoiceCallSocket(port: port, receive: receive)
                open = opened
                return opened.candidates()
            } catch {
                throw GKError(.communicationsFailure, "the voice chat's UDP socket could not be opened on port \(port): \(error)")
            }
        }

        /// Closes the socket.
        mutating func close() {
            open?.close()
            open = nil
        }
    }

    private let logger: Logger
    private let state: Mutex<State>

    /// A service of its own (tests and benches run several in one process; games use ``default``).
    package init(logger: Logger = Logger(label: "OpenGameKit.GKVoiceChatService")) {
        self.logger = logger
        state = Mutex(State(audio: VoiceCallAudio(logger: logger)))
    }

    deinit {
        state.withLock { $0.socket.close() }
    }

    // MARK: Settings

    /// The game's side: its participant id and its channel to the others. Held weakly, as GameKit's is: the game
    /// keeps it. A client released while set (nothing else held it) is reported: logged once as an error, and
    /// ``startVoiceChat(withParticipantID:)`` throws naming its type.
    public weak var client: (any GKVoiceChatClient)? {
        get { state.withLock { $0.client } }
        set {
            state.withLock { state in
                state.client = newValue
                state.clientType = newValue.map { String(describing: type(of: $0)) }
                state.releaseReported = false
            }
        }
    }

    /// How long each stage may take (see ``Timeouts``).
    public var timeouts: Timeouts {
        get { state.withLock { $0.calls.timeouts } }
        set { state.withLock { $0.calls.timeouts = newValue } }
    }

    /// The UDP port direct paths use (beyond the seed): 0, the default, lets the system pick one; a fixed port suits
    /// a firewall that opens one. Takes effect when the socket next opens (when no call is under way).
    public var mediaPort: UInt16 {
        get { state.withLock { $0.socket.port } }
        set { state.withLock { $0.socket.port = newValue } }
    }

    /// What the service refused so far.
    public var statistics: Statistics { state.withLock { $0.calls.statistics } }

    /// Where every call's audio comes from and goes to: any ``VoiceAudioSource`` and ``VoiceAudioSink``; nil for
    /// either means the system's default microphone or speakers, opened when a call first connects.
    public func setVoiceAudio(source: (any VoiceAudioSource)?, sink: (any VoiceAudioSink)?) {
        let given = VoiceAudioDevices.Given(source: source, sink: sink)
        state.withLock { $0.audio.devices.use(given) }
    }

    // MARK: Controls

    /// Whether the microphone is muted: while it is, the other participants hear silence.
    public var isMicrophoneMuted: Bool {
        get { state.withLock { $0.audio.muted } }
        set { state.withLock { $0.audio.muted = newValue } }
    }

    /// The other participants' volume, 0 (silent) to 1 (full); values outside are clamped.
    public var remoteParticipantVolume: Float {
        get { state.withLock { $0.audio.volume } }
        set { state.withLock { $0.audio.volume = min(max(newValue, 0), 1) } }
    }

    /// Whether ``inputMeterLevel`` is measured.
    public var isInputMeteringEnabled: Bool {
        get { state.withLock { $0.audio.inputMetering } }
        set { state.withLock { $0.audio.inputMetering = newValue } }
    }

    /// The microphone's level over the last 20 ms frame, in dB below full scale (−120…0); −120 while metering is off
    /// or no call is connected. Measured before muting: a muted player who talks still moves the meter.
    public var inputMeterLevel: Float { state.withLock { $0.audio.inputLevel } }

    /// Whether ``outputMeterLevel`` is measured.
    public var isOutputMeteringEnabled: Bool {
        get { state.withLock { $0.audio.outputMetering } }
        set { state.withLock { $0.audio.outputMetering = newValue } }
    }

    /// The level of what the service played over the last 20 ms frame (every call mixed, at
    /// ``remoteParticipantVolume``), in dB below full scale (−120…0); −120 while metering is off.
    public var outputMeterLevel: Float { state.withLock { $0.audio.outputLevel } }

    /// What the service waits for before it can talk or play (no microphone, no speakers), or nil.
    public var waitingFor: String? { state.withLock { $0.audio.devices.waitingFor } }

    // MARK: Calls

    /// Invites `participantID` to a call, through the client's channel. When `participantID`'s own invitation is
    /// waiting for an answer (both players asked at once), this accepts it: one call, no second ring. Throws
    /// `invalidParameter` without a client, for the client's own participant id, or when a call with `participantID`
    /// is already under way, and `communicationsFailure` when the UDP socket cannot be opened. The outcome reaches
    /// the client: `didStartWithParticipantID` or `didNotStartWithParticipantID:error:`.
    public func startVoiceChat(withParticipantID participantID: String) throws {
        // The client is asked outside the lock: its code never runs while the service holds it.
        guard let own = currentClient()?.participantID() else {
            if let released = state.withLock({ $0.clientType }) {
                throw GKError(
                    .invalidParameter,
                    "GKVoiceChatService's client (\(released)) was released: the service holds its client weakly, so the game must keep a reference to it while voice chat is used"
                )
            }
            throw GKError(.invalidParameter, "GKVoiceChatService has no client; set `client` before starting a voice chat")
        }
        let token = (0..<VoiceCallSignal.tokenLength).map { _ in UInt8.random(in: .min ... .max) }
        try actWithCandidates { calls, candidates throws in
            try calls.start(with: participantID, own: own, token: token, at: .now, candidates: candidates)
        }
    }

    /// Accepts the invitation `callID`; the services then connect and the client hears `didStartWithParticipantID`.
    /// Throws `invalidParameter` when no invitation with that id waits (answered, withdrawn or expired), and
    /// `communicationsFailure` when the UDP socket cannot be opened.
    public func acceptCallID(_ callID: Int) throws {
        try actWithCandidates { calls, candidates throws in try calls.accept(callID: callID, at: .now, candidates: candidates) }
    }

    /// Declines the invitation `callID`: the caller hears `didNotStartWithParticipantID` with `userDenied`. An id no
    /// invitation has is ignored.
    public func denyCallID(_ callID: Int) {
        act { $0.calls.deny(callID: callID) }
    }

    /// Ends the call with `participantID` (or withdraws the invitation): both sides hear
    /// `didStopWithParticipantID` with no error (`didNotStartWithParticipantID` with `cancelled` for a call not yet
    /// connected). Nothing happens when there is no such call.
    public func stopVoiceChat(withParticipantID participantID: String) {
        act { $0.calls.stop(with: participantID) }
    }

    /// Takes signalling data the client received from `participantID`'s service. Data that is not the service's,
    /// replayed, for a call that does not exist, or from a participant not in the call is refused (counted in
    /// ``statistics``) and changes nothing.
    public func receivedData(_ data: Data, fromParticipantID participantID: String) {
        let own = currentClient()?.participantID()
        actWithCandidates { calls, candidates in
            calls.received([UInt8](data), from: participantID, own: own, at: .now, candidates: candidates)
        }
    }

    /// Takes real-time data the client received from `participantID`'s service (the fallback path). Data that does
    /// not authenticate for a call with `participantID` is dropped and counted.
    public func receivedRealTimeData(_ data: Data, fromParticipantID participantID: String) {
        act { $0.calls.receivedRealTime([UInt8](data), from: participantID, at: .now) }
    }

    /// Called by the client's default `sendRealTimeData`: it has no real-time channel, so a call that needs one
    /// fails.
    package func clientHasNoRealTimeChannel(for participantID: String) {
        act { $0.calls.noRealTimeChannel(to: participantID) }
    }

    /// The participants with a connected call, and how each is reached (for tests and benches).
    package var connectedPaths: [String: String] { state.withLock { $0.calls.connectedPaths } }

    private func receiveDatagram(_ bytes: [UInt8], from address: SocketAddress) {
        act { $0.calls.receivedDatagram(bytes, from: address, at: .now) }
    }

    // MARK: The 20 ms clock

    /// Every 20 ms while a call exists: the calls' timeouts, probes and keep-alives; the microphone to every
    /// connected call; every call to the speakers.
    private func tick() {
        act { state in
            let now = ContinuousClock.now
            var effects = state.calls.tick(at: now)
            if state.calls.hasLiveCall, let packet = state.audio.talk() { effects += state.calls.send(voice: packet.bytes, at: now) }
            state.audio.listen()
            return effects
        }
    }

    /// Whether the clock goes on: while any call exists. The last call gone, the socket closes too.
    private func keepRunning() -> Bool {
        state.withLock { state in
            guard state.calls.isEmpty else { return true }
            state.running = false
            state.socket.close()
            state.audio.reset()
            return false
        }
    }

    // MARK: Effects

    /// Runs `decide` on the calls with a function that gives this device's candidates, opening the socket on first
    /// need; then as ``act(_:)``.
    private func actWithCandidates<E: Error>(
        _ decide: (inout VoiceCallState, () throws -> [VoiceCallCandidate]) throws(E) -> [VoiceCallEffect]
    ) throws(E) {
        try act { (state) throws(E) -> [VoiceCallEffect] in
            var socket = state.socket
            defer { state.socket = socket }
            return try decide(&state.calls) {
                try socket.candidates { [weak self] bytes, address in self?.receiveDatagram(bytes, from: address) }
            }
        }
    }

    /// Runs `decide` under the lock, does at once the effects on the service's own audio and log, and queues the
    /// others; then delivers the queue outside the lock. Effects leave in the order they were decided, whichever
    /// thread decided them: an acceptance decided after an invitation is never sent before it (the other side would
    /// take the late invitation for a new call). A thread that finds another delivering leaves its effects to it; a
    /// client callback that calls the service back has its effects delivered when the callback returns.
    private func act<E: Error>(_ decide: (inout State) throws(E) -> [VoiceCallEffect]) throws(E) {
        var batch = try state.withLock { (state) throws(E) -> [VoiceCallEffect] in
            for effect in try decide(&state) {
                switch effect {
                case .play(let participantID, let payload): state.audio.hear(payload, from: participantID)
                case .forget(let participantID): state.audio.forget(participantID)
                case .log(let line): logger.debug("\(line)")
                default: state.queuedEffects.append(effect)
                }
            }
            if !state.running, !state.calls.isEmpty {
                state.running = true
                VoiceFrameClock.start(
                    name: "OGK voice calls", running: { [weak self] in self?.keepRunning() ?? false }, tick: { [weak self] in self?.tick() })
            }
            guard !state.deliveringEffects, !state.queuedEffects.isEmpty else { return [] }
            state.deliveringEffects = true
            defer { state.queuedEffects = [] }
            return state.queuedEffects
        }
        while !batch.isEmpty {
            perform(batch)
            batch = state.withLock { state in
                guard !state.queuedEffects.isEmpty else {
                    state.deliveringEffects = false
                    return []
                }
                defer { state.queuedEffects = [] }
                return state.queuedEffects
            }
        }
    }

    /// The client, or nil. When the game set one and it is gone (released: the service holds it weakly), logs that as
    /// an error once, naming its type — a client the game forgot to keep is reported, not silently gone.
    private func currentClient() -> (any GKVoiceChatClient)? {
        let (client, released) = state.withLock { state -> ((any GKVoiceChatClient)?, String?) in
            if let client = state.client { return (client, nil) }
            guard let type = state.clientType, !state.releaseReported else { return (nil, nil) }
            state.releaseReported = true
            return (nil, type)
        }
        if let released {
            logger.error(
                "GKVoiceChatService's client (\(released)) was released while set: the service holds it weakly, so the game must keep a reference to it; until a client is set again, nothing reaches the game or the other participants"
            )
        }
        return client
    }

    /// Delivers effects that reach the client or the network, in order, outside the lock.
    private func perform(_ effects: [VoiceCallEffect]) {
        let client = effects.contains(where: \.reachesClient) ? currentClient() : nil
        let socket = state.withLock { $0.socket.open }
        for effect in effects {
            switch effect {
            case .signal(let participantID, let signal):
                client?.voiceChatService(self, send: Data(signal.bytes), toParticipantID: participantID)
            case .realTime(let participantID, let bytes):
                client?.voiceChatService(self, sendRealTimeData: Data(bytes), toParticipantID: participantID)
            case .datagram(let bytes, let address):
                socket?.send(bytes, to: address)
            case .started(let participantID, let token):
                // Unless the call ended meanwhile (a client without a real-time channel).
                guard state.withLock({ $0.calls.hasCall(with: participantID, token: token) }) else { continue }
                client?.voiceChatService(self, didStartWithParticipantID: participantID)
            case .notStarted(let participantID, let error):
                client?.voiceChatService(self, didNotStartWithParticipantID: participantID, error: error)
            case .stopped(let participantID, let error):
                client?.voiceChatService(self, didStopWithParticipantID: participantID, error: error)
            case .invitation(let participantID, let callID):
                client?.voiceChatService(self, didReceiveInvitationFromParticipantID: participantID, callID: callID)
            case .play, .forget, .log:
                continue
            }
        }
    }
}
