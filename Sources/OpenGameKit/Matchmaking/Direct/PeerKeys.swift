import Crypto
import GameCenterProtocol

/// The keys of one direct path between two members of a match, agreed from the X25519 keys their ``PeerOffer``s
/// carry. The relay names the member each offer came from, so the keys are bound to the two players: HKDF-SHA256
/// (no salt; as info, `"OpenGameKit match direct 1"`, the match id, then the two player ids, each followed by a
/// zero byte, the smaller one first) gives 64 bytes: the smaller player's sending key, then the other's.
struct PeerKeys: Sendable {
    /// The HKDF info's prefix.
    static let label = Array("OpenGameKit match direct 1".utf8)

    /// Seals what this device sends to the peer.
    let send: RelayKey
    /// Opens what the peer sends.
    let receive: RelayKey

    /// Agrees the keys; nil for a peer key that is not a valid X25519 key or gives the all-zero secret.
    init?(
        privateKey: Curve25519.KeyAgreement.PrivateKey, peerPublicKey: [UInt8], matchID: String, localPlayerID: String, peerPlayerID: String
    ) {
        guard let remote = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: peerPublicKey),
            let secret = try? privateKey.sharedSecretFromKeyAgreement(with: remote),
            !secret.withUnsafeBytes({ $0.allSatisfy { $0 == 0 } })
        else { return nil }
        let localFirst = localPlayerID < peerPlayerID
        let (first, second) = localFirst ? (localPlayerID, peerPlayerID) : (peerPlayerID, localPlayerID)
        let info = Self.label + Array(matchID.utf8) + [0] + Array(first.utf8) + [0] + Array(second.utf8) + [0]
        let material = secret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: [UInt8](), sharedInfo: info, outputByteCount: 64)
        let bytes = material.withUnsafeBytes { Array($0) }
        // 32 bytes always make a key.
        let firstSends = RelayKey(bytes: bytes[0..<32])!
        let secondSends = RelayKey(bytes: bytes[32..<64])!
        (send, receive) = localFirst ? (firstSends, secondSends) : (secondSends, firstSends)
    }
}
