import Crypto
import NIOCore

/// One two-party call as one side sees it, from the invitation to its end.
struct VoiceCall: Sendable {
    /// Where the call is.
    enum Phase: Sendable, Equatable {
        /// This side invited and waits for the answer.
        case inviting
        /// The other side invited; the game has not answered yet.
        case ringing
        /// Accepted: both sides probe for a direct path.
        case connecting
        /// Voice flows.
        case live
    }

    /// How this side's media reaches the other side.
    enum Path: Sendable, Equatable {
        /// Straight to this UDP address.
        case direct(SocketAddress)
        /// Through the client's `sendRealTimeData`.
        case realTime
    }

    /// The other participant.
    let participantID: String
    /// The id the game answers an invitation with.
    let callID: Int
    /// The call's token, in every signalling message.
    let token: [UInt8]
    /// Whether this side invited.
    let isCaller: Bool
    /// This side's ephemeral key.
    let privateKey: Curve25519.KeyAgreement.PrivateKey
    var phase: Phase
    /// When the phase began.
    var phaseStarted: ContinuousClock.Instant
    /// The other side's public key, once known.
    var remotePublicKey: [UInt8] = []
    /// Where the other side's media can be reached.
    var remoteCandidates: [VoiceCallCandidate] = []
    /// The media keys, once both keys are known.
    var keys: VoiceCallKeys?
    /// The chosen path, once live.
    var path: Path?
    /// When the last authenticated datagram arrived.
    var lastHeard: ContinuousClock.Instant
    /// When this side last sent a datagram.
    var lastSent: ContinuousClock.Instant
    /// When this side last probed the other's candidates.
    var lastProbe: ContinuousClock.Instant?

    /// A call in `phase` from now.
    init(participantID: String, callID: Int, token: [UInt8], isCaller: Bool, phase: Phase, now: ContinuousClock.Instant) {
        self.participantID = participantID
        self.callID = callID
        self.token = token
        self.isCaller = isCaller
        self.phase = phase
        privateKey = Curve25519.KeyAgreement.PrivateKey()
        phaseStarted = now
        lastHeard = now
        lastSent = now
    }

    /// This side's public key, as it travels.
    var publicKey: [UInt8] { Array(privateKey.publicKey.rawRepresentation) }

    /// Agrees the keys with the other side's `remoteKey`; false when it is not a usable key.
    mutating func agree(with remoteKey: [UInt8]) -> Bool {
        guard let keys = VoiceCallKeys(isCaller: isCaller, privateKey: privateKey, remotePublicKey: remoteKey, token: token) else { return false }
        remotePublicKey = remoteKey
        self.keys = keys
        return true
    }

    /// Moves to `phase` at `now`.
    mutating func enter(_ phase: Phase, at now: ContinuousClock.Instant) {
        self.phase = phase
        phaseStarted = now
        lastHeard = now
    }

    /// Seals `payload` as `kind`, noting the send; nil before the keys are agreed.
    mutating func seal(_ kind: VoiceCallDatagramKind, _ payload: [UInt8] = [], at now: ContinuousClock.Instant) -> [UInt8]? {
        guard keys != nil else { return nil }
        lastSent = now
        return keys!.sealer.seal(kind, payload)
    }

    /// Opens a datagram from the other side, noting when it was heard; nil when it does not authenticate.
    mutating func open(_ bytes: [UInt8], at now: ContinuousClock.Instant) -> (kind: VoiceCallDatagramKind, payload: [UInt8])? {
        guard keys != nil, let opened = keys!.opener.open(bytes) else { return nil }
        lastHeard = now
        return opened
    }
}
