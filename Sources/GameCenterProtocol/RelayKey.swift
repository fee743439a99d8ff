import CRelayAEAD
import Crypto

/// A datagram key: 32 random bytes shared by one relay connection's device and the server.
///
/// The server makes one with `random()` per connection and sends it in the welcome frame; both sides then seal
/// and open that connection's UDP datagrams with it. Equality compares in constant time. Treat `bytes` as a
/// secret: never log it.
public struct RelayKey: Sendable, Equatable {
    /// The key as swift-crypto holds it.
    let symmetricKey: SymmetricKey
    /// The key's ChaCha20-Poly1305 context, set up once (see `RelayCipher`).
    let cipher: RelayCipher

    private init(symmetricKey: SymmetricKey, fastCipher: Bool = true) {
        self.symmetricKey = symmetricKey
        cipher = RelayCipher(key: symmetricKey, fast: fastCipher)
    }

    /// Makes a fresh key from the system's secure random number generator.
    public static func random() -> RelayKey {
        RelayKey(symmetricKey: SymmetricKey(size: .bits256))
    }

    /// Wraps received key bytes; nil unless there are exactly 32.
    public init?(bytes: some Collection<UInt8>) {
        self.init(bytes: bytes, fastCipher: true)
    }

    /// Wraps received key bytes; with `fastCipher` false it always seals and opens with swift-crypto's `ChaChaPoly`,
    /// as on platforms without the fast context (for tests that compare the two).
    init?(bytes: some Collection<UInt8>, fastCipher: Bool) {
        guard bytes.count == 32 else { return nil }
        self.init(symmetricKey: SymmetricKey(data: Array(bytes)), fastCipher: fastCipher)
    }

    /// The key's 32 bytes, as the welcome frame carries them.
    public var bytes: [UInt8] {
        symmetricKey.withUnsafeBytes { Array($0) }
    }

    /// Equal keys have equal bytes (compared in constant time).
    public static func == (lhs: RelayKey, rhs: RelayKey) -> Bool {
        lhs.symmetricKey == rhs.symmetricKey
    }
}

/// A ChaCha20-Poly1305 context for one key, kept for the key's lifetime: BoringSSL's, which swift-crypto bundles on
/// Linux, where available; otherwise none, and `RelayDatagram` uses swift-crypto's `ChaChaPoly` per call.
/// `@unchecked Sendable`: the C context is made in `init`, freed in `deinit`, and BoringSSL allows concurrent use between.
final class RelayCipher: @unchecked Sendable {
    /// The context; BoringSSL allows concurrent seals and opens on one. Nil: use swift-crypto.
    let context: OpaquePointer?

    init(key: SymmetricKey, fast: Bool) {
        context = fast ? key.withUnsafeBytes { ogk_relay_aead_new($0.bindMemory(to: UInt8.self).baseAddress) } : nil
    }

    deinit {
        ogk_relay_aead_free(context)
    }
}
