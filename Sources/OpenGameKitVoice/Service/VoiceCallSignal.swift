/// One signalling message of a two-party voice call, carried by the game's own channel
/// (`GKVoiceChatClient.voiceChatService(_:send:toParticipantID:)`).
///
/// Layout, big-endian: `"OGVC"`, version 1, the kind, the call's 16-byte token (random, chosen by the caller); then,
/// for an invitation or an acceptance, the sender's X25519 public key (32 bytes), the number of candidates (0…8) and
/// each candidate's IPv4 address (4 bytes) and UDP port (2 bytes). A denial and a hang-up end there.
package struct VoiceCallSignal: Sendable, Equatable {
    /// What the message asks.
    package enum Kind: UInt8, Sendable {
        /// The caller asks for a call.
        case invite = 1
        /// The callee accepted.
        case accept = 2
        /// The callee declined.
        case deny = 3
        /// Either side ended the call (or the caller withdrew its invitation).
        case hangUp = 4
    }

    /// The bytes every message starts with.
    static let magic: [UInt8] = Array("OGVC".utf8) + [1]
    /// The most candidates one message offers.
    static let maxCandidates = 8
    /// The token's length in bytes.
    static let tokenLength = 16

    /// What the message asks.
    package var kind: Kind
    /// The call's token: the same in every message of one call.
    package var token: [UInt8]
    /// The sender's X25519 public key (invite, accept).
    package var publicKey: [UInt8] = []
    /// Where the sender's media can be reached (invite, accept).
    package var candidates: [VoiceCallCandidate] = []

    /// A message.
    package init(kind: Kind, token: [UInt8], publicKey: [UInt8] = [], candidates: [VoiceCallCandidate] = []) {
        self.kind = kind
        self.token = token
        self.publicKey = publicKey
        self.candidates = Array(candidates.prefix(Self.maxCandidates))
    }

    /// Parses a message; nil for anything else (another magic or version, an unknown kind, a wrong length, a key that
    /// is not 32 bytes, more than 8 candidates).
    package init?(bytes: some Collection<UInt8>) {
        let b = Array(bytes)
        let fixed = Self.magic.count + 1 + Self.tokenLength
        guard b.count >= fixed, Array(b[0..<Self.magic.count]) == Self.magic, let kind = Kind(rawValue: b[Self.magic.count]) else { return nil }
        self.kind = kind
        token = Array(b[(Self.magic.count + 1)..<fixed])
        switch kind {
        case .deny, .hangUp:
            guard b.count == fixed else { return nil }
        case .invite, .accept:
            guard b.count >= fixed + 33 else { return nil }
            publicKey = Array(b[fixed..<(fixed + 32)])
            let count = Int(b[fixed + 32])
            guard count <= Self.maxCandidates, b.count == fixed + 33 + 6 * count else { return nil }
            candidates = (0..<count).map { index in
                let at = fixed + 33 + 6 * index
                return VoiceCallCandidate(address: Array(b[at..<(at + 4)]), port: UInt16(b[at + 4]) << 8 | UInt16(b[at + 5]))
            }
        }
    }

    /// The wire bytes.
    package var bytes: [UInt8] {
        var b = Self.magic + [kind.rawValue] + token
        if kind == .invite || kind == .accept {
            b += publicKey
            b.append(UInt8(candidates.count))
            for candidate in candidates { b += candidate.address + [UInt8(candidate.port >> 8), UInt8(candidate.port & 0xFF)] }
        }
        return b
    }
}
