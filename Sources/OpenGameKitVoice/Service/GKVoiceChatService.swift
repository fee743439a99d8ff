import Foundation
import GameCenterProtocol
import Logging
import NIOCore
import OpenGameKit

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
public final class GKVoiceChatService: @unchecked Sendable {
    // `@unchecked Sendable`: all state behind `lock`; the game's audio source and sink (not Sendable) are used only
    // under it.

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

    /// The meters' floor, in dB.
    static let meterFloor: Float = -120

    private let lock = NSLock()
    private let logger: Logger
    private weak var _client: (any GKVoiceChatClient)?
    /// The calls: what they do next is decided there.
    private var state = VoiceCallState()
    /// Effects decided under the lock and not yet delivered, in the order they were decided.
    private var queuedEffects: [VoiceCallEffect] = []
    /// Whether a thread is delivering ``queuedEffects`` (it delivers those queued meanwhile too).
    private var deliveringEffects = false
    private var socket: VoiceCallSocket?
    private var running = false
    private var _mediaPort: UInt16 = 0
    private var muted = false
    private var volume: Float = 1
    private var inputMetering = false
    private var outputMetering = false
    private var inputLevel = GKVoiceChatService.meterFloor
    private var outputLevel = GKVoiceChatService.meterFloor
    // The audio engine.
    private let devices = VoiceAudioDevices()
    private var sender: VoiceSendPipeline?
    private var receiver: VoiceReceivePipeline?
    private var mixer = VoiceMixer()
    private var played: [Int16]?
    private let silence = [Int16](repeating: 0, count: VoiceFormat.samplesPerFrame)

    /// A service of its own (tests and benches run several in one process; games use ``default``).
    package init(logger: Logger = Logger(label: "OpenGameKit.GKVoiceChatService")) {
        self.logger = logger
    }

    deinit {
        socket?.close()
    }

    // MARK: Settings

    /// The game's side: its participant id and its channel to the others. Held weakly.
    public weak var client: (any GKVoiceChatClient)? {
        get { lock.withLock { _client } }
        set { lock.withLock { _client = newValue } }
    }

    /// How long each stage may take (see ``Timeouts``).
    public var timeouts: Timeouts {
        get { lock.withLock { state.timeouts } }
        set { lock.withLock { state.timeouts = newValue } }
    }

    /// The UDP port direct paths use (beyond the seed): 0, the default, lets the system pick one; a fixed port suits
    /// a firewall that opens one. Takes effect when the socket next opens (when no call is under way).
    public var mediaPort: UInt16 {
        get { lock.withLock { _mediaPort } }
        set { lock.withLock { _mediaPort = newValue } }
    }

    /// What the service refused so far.
    public var statistics: Statistics { lock.withLock { state.statistics } }

    /// Where every call's audio comes from and goes to: any ``VoiceAudioSource`` and ``VoiceAudioSink``; nil for
    /// either means the system's default microphone or speakers, opened when a call first connects.
    public func setVoiceAudio(source: (any VoiceAudioSource)?, sink: (any VoiceAudioSink)?) {
        lock.withLock { devices.use(source: source, sink: sink) }
    }

    // MARK: Controls

    /// Whether the microphone is muted: while it is, the other participants hear silence.
    public var isMicrophoneMuted: Bool {
        get { lock.withLock { muted } }
        set { lock.withLock { muted = newValue } }
    }

    /// The other participants' volume, 0 (silent) to 1 (full); values outside are clamped.
    public var remoteParticipantVolume: Float {
        get { lock.withLock { volume } }
        set { lock.withLock { volume = min(max(newValue, 0), 1) } }
    }

    /// Whether ``inputMeterLevel`` is measured.
    public var isInputMeteringEnabled: Bool {
        get { lock.withLock { inputMetering } }
        set {
            lock.withLock {
                inputMetering = newValue
                inputLevel = Self.meterFloor
            }
        }
    }

    /// The microphone's level over the last 20 ms frame, in dB below full scale (−120…0); −120 while metering is off
    /// or no call is connected. Measured before muting: a muted player who talks still moves the meter.
    public var inputMeterLevel: Float { lock.withLock { inputLevel } }

    /// Whether ``outputMeterLevel`` is measured.
    public var isOutputMeteringEnabled: Bool {
        get { lock.withLock { outputMetering } }
        set {
            lock.withLock {
                outputMetering = newValue
                outputLevel = Self.meterFloor
            }
        }
    }

    /// The level of what the service played over the last 20 ms frame (every call mixed, at
    /// ``remoteParticipantVolume``), in dB below full scale (−120…0); −120 while metering is off.
    public var outputMeterLevel: Float { lock.withLock { outputLevel } }

    /// What the service waits for before it can talk or play (no microphone, no speakers), or nil.
    public var waitingFor: String? { lock.withLock { devices.waitingFor } }

    // MARK: Calls

    /// Invites `participantID` to a call, through the client's channel. When `participantID`'s own invitation is
    /// waiting for an answer (both players asked at once), this accepts it: one call, no second ring. Throws
    /// `invalidParameter` without a client, for the client's own participant id, or when a call with `participantID`
    /// is already under way, and `communicationsFailure` when the UDP socket cannot be opened. The outcome reaches
    /// the client: `didStartWithParticipantID` or `didNotStartWithParticipantID:error:`.
    public func startVoiceChat(withParticipantID participantID: String) throws {
        // The client is asked outside the lock: its code never runs while the service holds it.
        guard let own = client?.participantID() else {
            throw GKError(.invalidParameter, "GKVoiceChatService has no client; set `client` before starting a voice chat")
        }
        let token = (0..<VoiceCallSignal.tokenLength).map { _ in UInt8.random(in: .min ... .max) }
        try act { try state.start(with: participantID, own: own, token: token, at: .now, candidates: candidates) }
    }

    /// Accepts the invitation `callID`; the services then connect and the client hears `didStartWithParticipantID`.
    /// Throws `invalidParameter` when no invitation with that id waits (answered, withdrawn or expired), and
    /// `communicationsFailure` when the UDP socket cannot be opened.
    public func acceptCallID(_ callID: Int) throws {
        try act { try state.accept(callID: callID, at: .now, candidates: candidates) }
    }

    /// Declines the invitation `callID`: the caller hears `didNotStartWithParticipantID` with `userDenied`. An id no
    /// invitation has is ignored.
    public func denyCallID(_ callID: Int) {
        act { state.deny(callID: callID) }
    }

    /// Ends the call with `participantID` (or withdraws the invitation): both sides hear
    /// `didStopWithParticipantID` with no error (`didNotStartWithParticipantID` with `cancelled` for a call not yet
    /// connected). Nothing happens when there is no such call.
    public func stopVoiceChat(withParticipantID participantID: String) {
        act { state.stop(with: participantID) }
    }

    /// Takes signalling data the client received from `participantID`'s service. Data that is not the service's,
    /// replayed, for a call that does not exist, or from a participant not in the call is refused (counted in
    /// ``statistics``) and changes nothing.
    public func receivedData(_ data: Data, fromParticipantID participantID: String) {
        let own = client?.participantID()
        act { state.received([UInt8](data), from: participantID, own: own, at: .now, candidates: candidates) }
    }

    /// Takes real-time data the client received from `participantID`'s service (the fallback path). Data that does
    /// not authenticate for a call with `participantID` is dropped and counted.
    public func receivedRealTimeData(_ data: Data, fromParticipantID participantID: String) {
        act { state.receivedRealTime([UInt8](data), from: participantID, at: .now) }
    }

    /// Called by the client's default `sendRealTimeData`: it has no real-time channel, so a call that needs one
    /// fails.
    package func clientHasNoRealTimeChannel(for participantID: String) {
        act { state.noRealTimeChannel(to: participantID) }
    }

    /// The participants with a connected call, and how each is reached (for tests and benches).
    package var connectedPaths: [String: String] { lock.withLock { state.connectedPaths } }

    /// This device's candidates, the socket opened on first need.
    private func candidates() throws -> [VoiceCallCandidate] {
        if let socket { return socket.candidates() }
        do {
            let opened = try VoiceCallSocket(port: _mediaPort) { [weak self] bytes, address in self?.receiveDatagram(bytes, from: address) }
            socket = opened
            return opened.candidates()
        } catch {
            throw GKError(.communicationsFailure, "the voice chat's UDP socket could not be opened on port \(_mediaPort): \(error)")
        }
    }

    // MARK: Media

    private func receiveDatagram(_ bytes: [UInt8], from address: SocketAddress) {
        act { state.receivedDatagram(bytes, from: address, at: .now) }
    }

    // MARK: The 20 ms clock

    private func startClockIfNeeded() {
        guard !running, !state.isEmpty else { return }
        running = true
        VoiceFrameClock.start(name: "OGK voice calls", running: { [weak self] in self?.keepRunning() ?? false }, tick: { [weak self] in self?.tick() })
    }

    /// Whether the clock goes on: while any call exists. The last call gone, the socket closes too.
    private func keepRunning() -> Bool {
        lock.withLock {
            guard state.isEmpty else { return true }
            running = false
            socket?.close()
            socket = nil
            sender = nil
            receiver = nil
            played = nil
            inputLevel = Self.meterFloor
            outputLevel = Self.meterFloor
            return false
        }
    }

    private func tick() {
        act { () -> [VoiceCallEffect] in
            let now = ContinuousClock.now
            var effects = state.tick(at: now)
            effects += talk(at: now)
            listen()
            return effects
        }
    }

    /// Reads a microphone frame, meters it, and sends it to every connected call unless muted.
    private func talk(at now: ContinuousClock.Instant) -> [VoiceCallEffect] {
        guard state.hasLiveCall else { return [] }
        devices.openIfDue(logger: logger)
        guard let source = devices.source else { return [] }
        let read: VoiceFrameRead
        do {
            read = try source.readFrame()
        } catch {
            logger.warning("the microphone failed: \(error)")
            devices.microphoneFailed()
            return []
        }
        var packet: VoicePacket?
        do {
            if sender == nil { sender = try VoiceSendPipeline() }
            if case .frame(let captured) = read {
                if inputMetering { inputLevel = Self.level(captured) }
                // Muted, the encoder hears silence: the stream's clock runs on, and DTX sends next to nothing.
                packet = try sender?.process(muted ? silence : captured, played: played)
            } else if read == .end {
                packet = try sender?.finish()
            }
        } catch {
            logger.warning("voice could not be encoded: \(error)")
        }
        guard let packet else { return [] }
        return state.send(voice: packet.bytes, at: now)
    }

    /// Plays 20 ms of every call, mixed at the remote volume, and meters it.
    private func listen() {
        guard let receiver else { return }
        var streams: [String: [Int16]] = [:]
        for (participantID, frame) in receiver.tick() {
            var settings = VoiceMixer.StreamSettings()
            settings.gain = volume
            try? mixer.set(settings, for: participantID)
            streams[participantID] = frame.samples
        }
        guard !streams.isEmpty || played != nil else { return }
        do {
            let out = try mixer.mix(streams)
            if outputMetering { outputLevel = Self.level(out) }
            if let sink = devices.sink { try sink.writeFrame(out) }
            played = stride(from: 0, to: out.count, by: 2).map { Int16((Int32(out[$0]) + Int32(out[$0 + 1])) / 2) }
        } catch {
            logger.warning("the speakers failed: \(error)")
            devices.speakersFailed()
        }
    }

    /// The RMS level of `samples` in dB below full scale, no lower than ``meterFloor``.
    static func level(_ samples: [Int16]) -> Float {
        guard !samples.isEmpty else { return meterFloor }
        var sum: Double = 0
        for sample in samples { sum += Double(sample) * Double(sample) }
        let rms = (sum / Double(samples.count)).squareRoot() / 32_768
        return max(meterFloor, Float(20 * log10(max(rms, 1e-9))))
    }

    // MARK: Effects

    /// Runs `decide` under the lock, does at once the effects that touch only the service's audio and log, and
    /// queues the others; then delivers the queue outside the lock. Effects leave in the order they were decided,
    /// whichever thread decided them: an acceptance decided after an invitation is never sent before it (the other
    /// side would take the late invitation for a new call). A thread that finds another delivering leaves its
    /// effects to it; a client callback that calls the service back has its effects delivered when the callback
    /// returns.
    private func act(_ decide: () throws -> [VoiceCallEffect]) rethrows {
        var batch = try lock.withLock { () throws -> [VoiceCallEffect] in
            for effect in try decide() {
                switch effect {
                case .play(let participantID, let payload): hear(payload, from: participantID)
                case .forget(let participantID): forget(participantID)
                case .log(let line): logger.debug("\(line)")
                default: queuedEffects.append(effect)
                }
            }
            startClockIfNeeded()
            guard !deliveringEffects, !queuedEffects.isEmpty else { return [] }
            deliveringEffects = true
            defer { queuedEffects = [] }
            return queuedEffects
        }
        while !batch.isEmpty {
            perform(batch)
            batch = lock.withLock {
                guard !queuedEffects.isEmpty else {
                    deliveringEffects = false
                    return []
                }
                defer { queuedEffects = [] }
                return queuedEffects
            }
        }
    }

    /// Hands a voice packet to the receive pipeline.
    private func hear(_ payload: [UInt8], from participantID: String) {
        do {
            if receiver == nil { receiver = try VoiceReceivePipeline() }
            try receiver?.receive(payload, from: participantID)
        } catch {
            logger.debug("dropped a voice packet from \(participantID): \(error)")
        }
    }

    /// Forgets a participant's audio when their call ends.
    private func forget(_ participantID: String) {
        receiver?.remove(participantID)
        mixer.remove(participantID)
    }

    /// Delivers effects that reach the client or the network, in order, outside the lock.
    private func perform(_ effects: [VoiceCallEffect]) {
        guard !effects.isEmpty else { return }
        let client: (any GKVoiceChatClient)? = lock.withLock { _client }
        let socket: VoiceCallSocket? = lock.withLock { self.socket }
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
                guard lock.withLock({ state.hasCall(with: participantID, token: token) }) else { continue }
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
