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

    /// How often a connecting call probes the other side's candidates.
    static let probeInterval = Duration.milliseconds(100)
    /// How often a live call sends a keep-alive when it sent nothing else.
    static let keepAliveInterval = Duration.milliseconds(500)
    /// How many call tokens are remembered to refuse replayed invitations.
    static let rememberedTokens = 1024
    /// The meters' floor, in dB.
    static let meterFloor: Float = -120

    private let lock = NSLock()
    private let logger: Logger
    private weak var _client: (any GKVoiceChatClient)?
    private var calls: [String: VoiceCall] = [:]
    /// Effects decided under the lock and not yet delivered, in the order they were decided.
    private var queuedEffects: [Effect] = []
    /// Whether a thread is delivering ``queuedEffects`` (it delivers those queued meanwhile too).
    private var deliveringEffects = false
    private var nextCallID = 1
    private var seenTokens: [[UInt8]] = []
    private var socket: VoiceCallSocket?
    private var running = false
    private var _timeouts = Timeouts()
    private var _statistics = Statistics()
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
        get { lock.withLock { _timeouts } }
        set { lock.withLock { _timeouts = newValue } }
    }

    /// The UDP port direct paths use (beyond the seed): 0, the default, lets the system pick one; a fixed port suits
    /// a firewall that opens one. Takes effect when the socket next opens (when no call is under way).
    public var mediaPort: UInt16 {
        get { lock.withLock { _mediaPort } }
        set { lock.withLock { _mediaPort = newValue } }
    }

    /// What the service refused so far.
    public var statistics: Statistics { lock.withLock { _statistics } }

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
        try act { () throws -> [Effect] in
            guard participantID != own else {
                throw GKError(.invalidParameter, "\(participantID) is this device's own participant id; a call needs another participant")
            }
            if let ringing = calls[participantID], ringing.phase == .ringing { return try accept(ringing, at: .now) }
            guard calls[participantID] == nil else {
                throw GKError(.invalidParameter, "a call with \(participantID) is already under way; stop it before starting another")
            }
            let socket = try openSocket()
            let token = (0..<VoiceCallSignal.tokenLength).map { _ in UInt8.random(in: .min ... .max) }
            remember(token)
            let call = VoiceCall(
                participantID: participantID, callID: takeCallID(), token: token, isCaller: true, phase: .inviting, now: .now)
            calls[participantID] = call
            startClockIfNeeded()
            let invite = VoiceCallSignal(kind: .invite, token: token, publicKey: call.publicKey, candidates: socket.candidates())
            return [.signal(participantID, invite.bytes)]
        }
    }

    /// Accepts the invitation `callID`; the services then connect and the client hears `didStartWithParticipantID`.
    /// Throws `invalidParameter` when no invitation with that id waits (answered, withdrawn or expired), and
    /// `communicationsFailure` when the UDP socket cannot be opened.
    public func acceptCallID(_ callID: Int) throws {
        try act { () throws -> [Effect] in
            guard let call = calls.values.first(where: { $0.callID == callID && $0.phase == .ringing }) else {
                throw GKError(.invalidParameter, "no invitation with call id \(callID) is waiting: it was answered, withdrawn or expired")
            }
            return try accept(call, at: .now)
        }
    }

    /// Answers the ringing `call`: the acceptance, and the first probes.
    private func accept(_ ringing: VoiceCall, at now: ContinuousClock.Instant) throws -> [Effect] {
        var call = ringing
        let socket = try openSocket()
        // The keys were agreed when the invitation arrived.
        call.enter(.connecting, at: now)
        let accept = VoiceCallSignal(kind: .accept, token: call.token, publicKey: call.publicKey, candidates: socket.candidates())
        var effects: [Effect] = [.signal(call.participantID, accept.bytes)]
        effects += probe(&call, at: now)
        calls[call.participantID] = call
        return effects
    }

    /// Declines the invitation `callID`: the caller hears `didNotStartWithParticipantID` with `userDenied`. An id no
    /// invitation has is ignored.
    public func denyCallID(_ callID: Int) {
        act { () -> [Effect] in
            guard let call = calls.values.first(where: { $0.callID == callID && $0.phase == .ringing }) else { return [] }
            calls[call.participantID] = nil
            return [.signal(call.participantID, VoiceCallSignal(kind: .deny, token: call.token).bytes)]
        }
    }

    /// Ends the call with `participantID` (or withdraws the invitation): both sides hear
    /// `didStopWithParticipantID` with no error (`didNotStartWithParticipantID` with `cancelled` for a call not yet
    /// connected). Nothing happens when there is no such call.
    public func stopVoiceChat(withParticipantID participantID: String) {
        act { () -> [Effect] in
            guard let call = calls.removeValue(forKey: participantID) else { return [] }
            forget(participantID)
            var effects: [Effect] = [.signal(participantID, VoiceCallSignal(kind: .hangUp, token: call.token).bytes)]
            if call.phase == .live {
                effects.append(.stopped(participantID, nil))
            } else if call.phase != .ringing {
                effects.append(.notStarted(participantID, GKError(.cancelled, "the call with \(participantID) was stopped before it connected")))
            }
            return effects
        }
    }

    /// Takes signalling data the client received from `participantID`'s service. Data that is not the service's,
    /// replayed, for a call that does not exist, or from a participant not in the call is refused (counted in
    /// ``statistics``) and changes nothing.
    public func receivedData(_ data: Data, fromParticipantID participantID: String) {
        let own = client?.participantID()
        act { () -> [Effect] in
            guard let signal = VoiceCallSignal(bytes: data) else { return refuse("malformed signalling data from \(participantID)") }
            return handle(signal, from: participantID, own: own, at: .now)
        }
    }

    /// Takes real-time data the client received from `participantID`'s service (the fallback path). Data that does
    /// not authenticate for a call with `participantID` is dropped and counted.
    public func receivedRealTimeData(_ data: Data, fromParticipantID participantID: String) {
        act { () -> [Effect] in
            let now = ContinuousClock.now
            guard var call = calls[participantID], let (kind, payload) = call.open([UInt8](data), at: now) else {
                _statistics.datagramsDropped += 1
                return []
            }
            defer { calls[participantID] = call }
            if kind == .voice { hear(payload, from: participantID) }
            return []
        }
    }

    /// Called by the client's default `sendRealTimeData`: it has no real-time channel, so a call that needs one
    /// fails.
    package func clientHasNoRealTimeChannel(for participantID: String) {
        act { () -> [Effect] in
            guard let call = calls[participantID], call.path == .realTime else { return [] }
            calls[participantID] = nil
            forget(participantID)
            return [
                .signal(participantID, VoiceCallSignal(kind: .hangUp, token: call.token).bytes),
                .notStarted(
                    participantID,
                    GKError(
                        .communicationsFailure,
                        "no direct UDP path to \(participantID) answered within \(_timeouts.directPath), and the client does not implement voiceChatService(_:sendRealTimeData:toParticipantID:) to carry the voice instead"
                    )),
            ]
        }
    }

    /// The participants with a connected call, and how each is reached (for tests and benches).
    package var connectedPaths: [String: String] {
        lock.withLock {
            calls.compactMapValues { call in
                guard call.phase == .live, let path = call.path else { return nil }
                if case .direct(let address) = path { return "direct \(address)" }
                return "real-time"
            }
        }
    }

    // MARK: Signalling

    /// What `signal` from `participantID` does; `own` is this device's participant id.
    private func handle(_ signal: VoiceCallSignal, from participantID: String, own: String?, at now: ContinuousClock.Instant) -> [Effect] {
        switch signal.kind {
        case .invite:
            guard !seenTokens.contains(signal.token) else { return refuse("a replayed invitation from \(participantID)") }
            guard participantID != own else { return refuse("an invitation from this device's own participant id") }
            var effects: [Effect] = []
            var bothCalled = false
            if let existing = calls[participantID] {
                if existing.phase == .inviting && existing.isCaller {
                    // Both invited at once: the larger token's invitation stands, and its callee accepts it at once.
                    guard existing.token.lexicographicallyPrecedes(signal.token) else { return [] }
                    calls[participantID] = nil
                    bothCalled = true
                } else {
                    // The other side began anew (it restarted): the old call is over.
                    calls[participantID] = nil
                    forget(participantID)
                    effects.append(
                        existing.phase == .live
                            ? .stopped(participantID, GKError(.communicationsFailure, "\(participantID) started a new call, ending this one"))
                            : .notStarted(participantID, GKError(.cancelled, "\(participantID) started a new call")))
                }
            }
            remember(signal.token)
            var call = VoiceCall(
                participantID: participantID, callID: takeCallID(), token: signal.token, isCaller: false, phase: .ringing, now: now)
            guard call.agree(with: signal.publicKey) else { return effects + refuse("an invitation with an unusable key from \(participantID)") }
            call.remoteCandidates = signal.candidates
            calls[participantID] = call
            startClockIfNeeded()
            if bothCalled, let accepted = try? accept(call, at: now) { return effects + accepted }
            return effects + [.invitation(participantID, call.callID)]
        case .accept:
            guard var call = calls[participantID], call.token == signal.token, call.isCaller, call.phase == .inviting else {
                return refuse("an acceptance for no call invited from \(participantID)")
            }
            guard call.agree(with: signal.publicKey) else { return refuse("an acceptance with an unusable key from \(participantID)") }
            call.remoteCandidates = signal.candidates
            call.enter(.connecting, at: now)
            let effects = probe(&call, at: now)
            calls[participantID] = call
            return effects
        case .deny:
            guard let call = calls[participantID], call.token == signal.token, call.isCaller, call.phase == .inviting else {
                return refuse("a denial for no call invited from \(participantID)")
            }
            calls[participantID] = nil
            return [.notStarted(participantID, GKError(.userDenied, "\(participantID) declined the call"))]
        case .hangUp:
            guard let call = calls[participantID], call.token == signal.token else { return refuse("a hang-up for no call with \(participantID)") }
            calls[participantID] = nil
            forget(participantID)
            switch call.phase {
            case .live: return [.stopped(participantID, nil)]
            case .ringing, .inviting, .connecting:
                return [.notStarted(participantID, GKError(.cancelled, "\(participantID) ended the call before it connected"))]
            }
        }
    }

    private func refuse(_ what: String) -> [Effect] {
        _statistics.signalsRefused += 1
        logger.debug("voice chat refused \(what)")
        return []
    }

    private func remember(_ token: [UInt8]) {
        seenTokens.append(token)
        if seenTokens.count > Self.rememberedTokens { seenTokens.removeFirst(seenTokens.count - Self.rememberedTokens) }
    }

    private func takeCallID() -> Int {
        defer { nextCallID += 1 }
        return nextCallID
    }

    /// The socket, opened on first need.
    private func openSocket() throws -> VoiceCallSocket {
        if let socket { return socket }
        do {
            let opened = try VoiceCallSocket(port: _mediaPort) { [weak self] bytes, address in self?.receiveDatagram(bytes, from: address) }
            socket = opened
            return opened
        } catch {
            throw GKError(.communicationsFailure, "the voice chat's UDP socket could not be opened on port \(_mediaPort): \(error)")
        }
    }

    // MARK: Media

    /// Probes each of the other side's candidates, at most every ``probeInterval``.
    private func probe(_ call: inout VoiceCall, at now: ContinuousClock.Instant) -> [Effect] {
        if let last = call.lastProbe, now - last < Self.probeInterval { return [] }
        call.lastProbe = now
        return call.remoteCandidates.compactMap { candidate in
            guard let address = candidate.socketAddress, let probe = call.seal(.probe, at: now) else { return nil }
            return .datagram(probe, address)
        }
    }

    private func receiveDatagram(_ bytes: [UInt8], from address: SocketAddress) {
        act { () -> [Effect] in
            let now = ContinuousClock.now
            let id = VoiceCallDatagram.receiverID(of: bytes)
            guard let participantID = calls.first(where: { id != nil && $0.value.keys?.opener.receiverID == id })?.key,
                var call = calls[participantID], let (kind, payload) = call.open(bytes, at: now)
            else {
                _statistics.datagramsDropped += 1
                return []
            }
            defer { calls[participantID] = call }
            switch kind {
            case .probe:
                return call.seal(.probeAnswer, at: now).map { [.datagram($0, address)] } ?? []
            case .probeAnswer:
                guard call.phase == .connecting else { return [] }
                call.path = .direct(address)
                call.enter(.live, at: now)
                logger.debug("voice chat with \(participantID) goes direct to \(address)")
                return [.started(participantID, call.token)]
            case .voice:
                hear(payload, from: participantID)
                return []
            case .keepAlive:
                return []
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

    // MARK: The 20 ms clock

    private func startClockIfNeeded() {
        guard !running else { return }
        running = true
        VoiceFrameClock.start(name: "OGK voice calls", running: { [weak self] in self?.keepRunning() ?? false }, tick: { [weak self] in self?.tick() })
    }

    /// Whether the clock goes on: while any call exists. The last call gone, the socket closes too.
    private func keepRunning() -> Bool {
        lock.withLock {
            guard calls.isEmpty else { return true }
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
        act { () -> [Effect] in
            let now = ContinuousClock.now
            var effects = advanceCalls(at: now)
            effects += talk(at: now)
            listen()
            return effects
        }
    }

    /// Timeouts, probes, the fallback and keep-alives.
    private func advanceCalls(at now: ContinuousClock.Instant) -> [Effect] {
        var effects: [Effect] = []
        for (participantID, var call) in calls {
            let elapsed = now - call.phaseStarted
            switch call.phase {
            case .inviting, .ringing:
                guard elapsed > _timeouts.invitation else { continue }
                calls[participantID] = nil
                let what = call.phase == .inviting ? "\(participantID) did not answer" : "the invitation from \(participantID) was not answered"
                effects.append(.signal(participantID, VoiceCallSignal(kind: .hangUp, token: call.token).bytes))
                effects.append(.notStarted(participantID, GKError(.communicationsFailure, "\(what) within \(_timeouts.invitation)")))
                continue
            case .connecting:
                if elapsed > _timeouts.directPath {
                    // No direct path: the client's real-time channel carries the voice, if it has one.
                    call.path = .realTime
                    call.enter(.live, at: now)
                    logger.debug("voice chat with \(participantID) found no direct path; it goes through the client's real-time channel")
                    if let keepAlive = call.seal(.keepAlive, at: now) { effects.append(.realTime(participantID, keepAlive)) }
                    effects.append(.started(participantID, call.token))
                } else {
                    effects += probe(&call, at: now)
                }
            case .live:
                if now - call.lastHeard > _timeouts.silence {
                    calls[participantID] = nil
                    forget(participantID)
                    effects.append(.signal(participantID, VoiceCallSignal(kind: .hangUp, token: call.token).bytes))
                    effects.append(.stopped(participantID, GKError(.communicationsFailure, "nothing was heard from \(participantID) for \(_timeouts.silence)")))
                    continue
                }
                if now - call.lastSent >= Self.keepAliveInterval, let keepAlive = call.seal(.keepAlive, at: now) {
                    effects.append(send(keepAlive, on: call))
                }
            }
            calls[participantID] = call
        }
        return effects
    }

    /// The effect that sends `bytes` on the call's path.
    private func send(_ bytes: [UInt8], on call: VoiceCall) -> Effect {
        if case .direct(let address) = call.path { return .datagram(bytes, address) }
        return .realTime(call.participantID, bytes)
    }

    /// Reads a microphone frame, meters it, and sends it to every connected call unless muted.
    private func talk(at now: ContinuousClock.Instant) -> [Effect] {
        let live = calls.keys.filter { calls[$0]?.phase == .live }
        guard !live.isEmpty else { return [] }
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
        let bytes = packet.bytes
        var effects: [Effect] = []
        for participantID in live {
            guard var call = calls[participantID], let sealed = call.seal(.voice, bytes, at: now) else { continue }
            effects.append(send(sealed, on: call))
            calls[participantID] = call
        }
        return effects
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

    /// What the service does outside its lock: sends and the client's callbacks.
    private enum Effect {
        case signal(String, [UInt8])
        case realTime(String, [UInt8])
        case datagram([UInt8], SocketAddress)
        case started(String, [UInt8])
        case notStarted(String, GKError)
        case stopped(String, GKError?)
        case invitation(String, Int)
    }

    /// Runs `decide` under the lock and queues the effects it returns, then delivers the queue outside the lock.
    /// Effects leave in the order they were decided, whichever thread decided them: an acceptance decided after an
    /// invitation is never sent before it (the other side would take the late invitation for a new call). A thread
    /// that finds another delivering leaves its effects to it; a client callback that calls the service back has its
    /// effects delivered when the callback returns.
    private func act(_ decide: () throws -> [Effect]) rethrows {
        var batch = try lock.withLock { () throws -> [Effect] in
            queuedEffects += try decide()
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

    private func perform(_ effects: [Effect]) {
        guard !effects.isEmpty else { return }
        let client: (any GKVoiceChatClient)? = lock.withLock { _client }
        let socket: VoiceCallSocket? = lock.withLock { self.socket }
        for effect in effects {
            switch effect {
            case .signal(let participantID, let bytes):
                client?.voiceChatService(self, send: Data(bytes), toParticipantID: participantID)
            case .realTime(let participantID, let bytes):
                client?.voiceChatService(self, sendRealTimeData: Data(bytes), toParticipantID: participantID)
            case .datagram(let bytes, let address):
                socket?.send(bytes, to: address)
            case .started(let participantID, let token):
                // Unless the call ended meanwhile (a client without a real-time channel).
                guard lock.withLock({ calls[participantID]?.token == token }) else { continue }
                client?.voiceChatService(self, didStartWithParticipantID: participantID)
            case .notStarted(let participantID, let error):
                client?.voiceChatService(self, didNotStartWithParticipantID: participantID, error: error)
            case .stopped(let participantID, let error):
                client?.voiceChatService(self, didStopWithParticipantID: participantID, error: error)
            case .invitation(let participantID, let callID):
                client?.voiceChatService(self, didReceiveInvitationFromParticipantID: participantID, callID: callID)
            }
        }
    }
}
