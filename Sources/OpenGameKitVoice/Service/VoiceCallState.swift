import NIOCore
import OpenGameKit

/// The calls of one ``GKVoiceChatService``: invitations and their answers, both sides inviting at once, the probes
/// for a direct UDP path and the fallback to the client's real-time channel, keep-alives and the timeouts.
///
/// Pure state: it owns no socket, thread or clock. The service feeds it what happened with the time it happened
/// (`now`, never read here), and carries out the returned ``VoiceCallEffect``s in order. Where a call needs this
/// device's candidates (an invitation, an acceptance), it asks the `candidates` function it is given, which opens
/// the service's socket; only then.
struct VoiceCallState: Sendable {
    /// How often a connecting call probes the other side's candidates.
    static let probeInterval = Duration.milliseconds(100)
    /// How often a live call sends a keep-alive when it sent nothing else.
    static let keepAliveInterval = Duration.milliseconds(500)
    /// How many call tokens are remembered to refuse replayed invitations.
    static let rememberedTokens = 1024

    /// How long each stage may take.
    var timeouts = GKVoiceChatService.Timeouts()
    /// What was refused so far.
    private(set) var statistics = GKVoiceChatService.Statistics()
    /// Every call, by the other participant.
    private(set) var calls: [String: VoiceCall] = [:]
    private var nextCallID = 1
    private var seenTokens: [[UInt8]] = []

    /// A state with no call.
    init() {}

    // MARK: Queries

    /// Whether no call exists (the service then stops its clock and closes its socket).
    var isEmpty: Bool { calls.isEmpty }

    /// Whether any call is connected (the microphone is read only then).
    var hasLiveCall: Bool { calls.values.contains { $0.phase == .live } }

    /// Whether the call with `participantID` is still the one with `token`.
    func hasCall(with participantID: String, token: [UInt8]) -> Bool { calls[participantID]?.token == token }

    /// The participants with a connected call, and how each is reached.
    var connectedPaths: [String: String] {
        calls.compactMapValues { call in
            guard call.phase == .live, let path = call.path else { return nil }
            if case .direct(let address) = path { return "direct \(address)" }
            return "real-time"
        }
    }

    // MARK: The game

    /// The game asks for a call with `participantID`; `own` is this device's participant id and `token` the new call's
    /// random token. When `participantID`'s own invitation is ringing, this accepts it instead. Throws
    /// `invalidParameter` for `own`, or when a call with `participantID` is already under way, and what
    /// `candidates` throws.
    mutating func start(
        with participantID: String, own: String, token: [UInt8], at now: ContinuousClock.Instant, candidates: () throws -> [VoiceCallCandidate]
    ) throws -> [VoiceCallEffect] {
        guard participantID != own else {
            throw GKError(.invalidParameter, "\(participantID) is this device's own participant id; a call needs another participant")
        }
        if let ringing = calls[participantID], ringing.phase == .ringing { return try accept(ringing, at: now, candidates: candidates) }
        guard calls[participantID] == nil else {
            throw GKError(.invalidParameter, "a call with \(participantID) is already under way; stop it before starting another")
        }
        let offered = try candidates()
        remember(token)
        let call = VoiceCall(participantID: participantID, callID: takeCallID(), token: token, isCaller: true, phase: .inviting, now: now)
        calls[participantID] = call
        return [.signal(participantID, VoiceCallSignal(kind: .invite, token: token, publicKey: call.publicKey, candidates: offered))]
    }

    /// The game accepts the invitation `callID`. Throws `invalidParameter` when no invitation with that id rings, and
    /// what `candidates` throws.
    mutating func accept(callID: Int, at now: ContinuousClock.Instant, candidates: () throws -> [VoiceCallCandidate]) throws -> [VoiceCallEffect] {
        guard let call = calls.values.first(where: { $0.callID == callID && $0.phase == .ringing }) else {
            throw GKError(.invalidParameter, "no invitation with call id \(callID) is waiting: it was answered, withdrawn or expired")
        }
        return try accept(call, at: now, candidates: candidates)
    }

    /// Answers the ringing `call`: the acceptance, and the first probes.
    private mutating func accept(_ ringing: VoiceCall, at now: ContinuousClock.Instant, candidates: () throws -> [VoiceCallCandidate]) throws
        -> [VoiceCallEffect]
    {
        var call = ringing
        let offered = try candidates()
        // The keys were agreed when the invitation arrived.
        call.enter(.connecting, at: now)
        var effects: [VoiceCallEffect] = [
            .signal(call.participantID, VoiceCallSignal(kind: .accept, token: call.token, publicKey: call.publicKey, candidates: offered))
        ]
        effects += probe(&call, at: now)
        calls[call.participantID] = call
        return effects
    }

    /// The game declines the invitation `callID`; an id no ringing invitation has changes nothing.
    mutating func deny(callID: Int) -> [VoiceCallEffect] {
        guard let call = calls.values.first(where: { $0.callID == callID && $0.phase == .ringing }) else { return [] }
        calls[call.participantID] = nil
        return [.signal(call.participantID, VoiceCallSignal(kind: .deny, token: call.token))]
    }

    /// The game ends the call with `participantID`, or withdraws its invitation; no such call changes nothing.
    mutating func stop(with participantID: String) -> [VoiceCallEffect] {
        guard let call = calls.removeValue(forKey: participantID) else { return [] }
        var effects: [VoiceCallEffect] = [.forget(participantID), .signal(participantID, VoiceCallSignal(kind: .hangUp, token: call.token))]
        if call.phase == .live {
            effects.append(.stopped(participantID, nil))
        } else if call.phase != .ringing {
            effects.append(.notStarted(participantID, GKError(.cancelled, "the call with \(participantID) was stopped before it connected")))
        }
        return effects
    }

    /// The client has no real-time channel to `participantID`: a call that needs one fails.
    mutating func noRealTimeChannel(to participantID: String) -> [VoiceCallEffect] {
        guard let call = calls[participantID], call.path == .realTime else { return [] }
        calls[participantID] = nil
        return [
            .forget(participantID),
            .signal(participantID, VoiceCallSignal(kind: .hangUp, token: call.token)),
            .notStarted(
                participantID,
                GKError(
                    .communicationsFailure,
                    "no direct UDP path to \(participantID) answered within \(timeouts.directPath), and the client does not implement voiceChatService(_:sendRealTimeData:toParticipantID:) to carry the voice instead"
                )),
        ]
    }

    // MARK: The other side

    /// Signalling `bytes` arrived from `participantID`; `own` is this device's participant id (nil without a client).
    /// What is malformed, replayed, for no call, or from someone not in the call is refused and counted.
    mutating func received(
        _ bytes: [UInt8], from participantID: String, own: String?, at now: ContinuousClock.Instant, candidates: () throws -> [VoiceCallCandidate]
    ) -> [VoiceCallEffect] {
        guard let signal = VoiceCallSignal(bytes: bytes) else { return refuse("malformed signalling data from \(participantID)") }
        switch signal.kind {
        case .invite:
            return invited(by: participantID, signal, own: own, at: now, candidates: candidates)
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
            switch call.phase {
            case .live: return [.forget(participantID), .stopped(participantID, nil)]
            case .ringing, .inviting, .connecting:
                return [.forget(participantID), .notStarted(participantID, GKError(.cancelled, "\(participantID) ended the call before it connected"))]
            }
        }
    }

    /// An invitation from `participantID`. When this side invited them too (both asked at once), the invitation with
    /// the larger token stands and its callee accepts it at once; the other is dropped.
    private mutating func invited(
        by participantID: String, _ signal: VoiceCallSignal, own: String?, at now: ContinuousClock.Instant, candidates: () throws -> [VoiceCallCandidate]
    ) -> [VoiceCallEffect] {
        guard !seenTokens.contains(signal.token) else { return refuse("a replayed invitation from \(participantID)") }
        guard participantID != own else { return refuse("an invitation from this device's own participant id") }
        var effects: [VoiceCallEffect] = []
        var bothCalled = false
        if let existing = calls[participantID] {
            if existing.phase == .inviting && existing.isCaller {
                guard existing.token.lexicographicallyPrecedes(signal.token) else { return [] }
                calls[participantID] = nil
                bothCalled = true
            } else {
                // The other side began anew (it restarted): the old call is over.
                calls[participantID] = nil
                effects.append(.forget(participantID))
                effects.append(
                    existing.phase == .live
                        ? .stopped(participantID, GKError(.communicationsFailure, "\(participantID) started a new call, ending this one"))
                        : .notStarted(participantID, GKError(.cancelled, "\(participantID) started a new call")))
            }
        }
        remember(signal.token)
        var call = VoiceCall(participantID: participantID, callID: takeCallID(), token: signal.token, isCaller: false, phase: .ringing, now: now)
        guard call.agree(with: signal.publicKey) else { return effects + refuse("an invitation with an unusable key from \(participantID)") }
        call.remoteCandidates = signal.candidates
        calls[participantID] = call
        if bothCalled, let accepted = try? accept(call, at: now, candidates: candidates) { return effects + accepted }
        return effects + [.invitation(participantID, callID: call.callID)]
    }

    /// A datagram arrived on the UDP socket from `address`: a probe is answered, a probe's answer picks the direct
    /// path, voice is played. One that is not addressed to a call, does not authenticate or is replayed is dropped
    /// and counted.
    mutating func receivedDatagram(_ bytes: [UInt8], from address: SocketAddress, at now: ContinuousClock.Instant) -> [VoiceCallEffect] {
        let id = VoiceCallDatagram.receiverID(of: bytes)
        guard let participantID = calls.first(where: { id != nil && $0.value.keys?.opener.receiverID == id })?.key,
            var call = calls[participantID], let (kind, payload) = call.open(bytes, at: now)
        else {
            statistics.datagramsDropped += 1
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
            return [.log("voice chat with \(participantID) goes direct to \(address)"), .started(participantID, token: call.token)]
        case .voice:
            return [.play(participantID, payload)]
        case .keepAlive:
            return []
        }
    }

    /// A datagram arrived from `participantID` through the client's real-time channel; voice is played. One that
    /// does not authenticate for a call with `participantID` is dropped and counted.
    mutating func receivedRealTime(_ bytes: [UInt8], from participantID: String, at now: ContinuousClock.Instant) -> [VoiceCallEffect] {
        guard var call = calls[participantID], let (kind, payload) = call.open(bytes, at: now) else {
            statistics.datagramsDropped += 1
            return []
        }
        calls[participantID] = call
        return kind == .voice ? [.play(participantID, payload)] : []
    }

    // MARK: Time and voice

    /// Time passed: invitations and silent calls time out, connecting calls probe or fall back to the client's
    /// real-time channel at the direct path's deadline, live calls that sent nothing lately send a keep-alive.
    mutating func tick(at now: ContinuousClock.Instant) -> [VoiceCallEffect] {
        var effects: [VoiceCallEffect] = []
        for (participantID, var call) in calls {
            let elapsed = now - call.phaseStarted
            switch call.phase {
            case .inviting, .ringing:
                guard elapsed > timeouts.invitation else { continue }
                calls[participantID] = nil
                let what = call.phase == .inviting ? "\(participantID) did not answer" : "the invitation from \(participantID) was not answered"
                effects.append(.signal(participantID, VoiceCallSignal(kind: .hangUp, token: call.token)))
                effects.append(.notStarted(participantID, GKError(.communicationsFailure, "\(what) within \(timeouts.invitation)")))
                continue
            case .connecting:
                if elapsed > timeouts.directPath {
                    // No direct path: the client's real-time channel carries the voice, if it has one.
                    call.path = .realTime
                    call.enter(.live, at: now)
                    effects.append(.log("voice chat with \(participantID) found no direct path; it goes through the client's real-time channel"))
                    if let keepAlive = call.seal(.keepAlive, at: now) { effects.append(.realTime(participantID, keepAlive)) }
                    effects.append(.started(participantID, token: call.token))
                } else {
                    effects += probe(&call, at: now)
                }
            case .live:
                if now - call.lastHeard > timeouts.silence {
                    calls[participantID] = nil
                    effects.append(.forget(participantID))
                    effects.append(.signal(participantID, VoiceCallSignal(kind: .hangUp, token: call.token)))
                    effects.append(.stopped(participantID, GKError(.communicationsFailure, "nothing was heard from \(participantID) for \(timeouts.silence)")))
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

    /// The microphone gave a voice packet (`VoicePacket`'s bytes): it goes to every connected call, on its path.
    mutating func send(voice packet: [UInt8], at now: ContinuousClock.Instant) -> [VoiceCallEffect] {
        var effects: [VoiceCallEffect] = []
        for participantID in calls.keys where calls[participantID]?.phase == .live {
            guard var call = calls[participantID], let sealed = call.seal(.voice, packet, at: now) else { continue }
            effects.append(send(sealed, on: call))
            calls[participantID] = call
        }
        return effects
    }

    // MARK: Helpers

    /// Probes each of the other side's candidates, at most every ``probeInterval``.
    private func probe(_ call: inout VoiceCall, at now: ContinuousClock.Instant) -> [VoiceCallEffect] {
        if let last = call.lastProbe, now - last < Self.probeInterval { return [] }
        call.lastProbe = now
        return call.remoteCandidates.compactMap { candidate in
            guard let address = candidate.socketAddress, let probe = call.seal(.probe, at: now) else { return nil }
            return .datagram(probe, address)
        }
    }

    /// The effect that sends `bytes` on the call's path.
    private func send(_ bytes: [UInt8], on call: VoiceCall) -> VoiceCallEffect {
        if case .direct(let address) = call.path { return .datagram(bytes, address) }
        return .realTime(call.participantID, bytes)
    }

    private mutating func refuse(_ what: String) -> [VoiceCallEffect] {
        statistics.signalsRefused += 1
        return [.log("voice chat refused \(what)")]
    }

    private mutating func remember(_ token: [UInt8]) {
        seenTokens.append(token)
        if seenTokens.count > Self.rememberedTokens { seenTokens.removeFirst(seenTokens.count - Self.rememberedTokens) }
    }

    private mutating func takeCallID() -> Int {
        defer { nextCallID += 1 }
        return nextCallID
    }
}
