import Crypto

/// A datagram key: 32 random bytes shared by one relay connection's device and the server.
///
/// The server makes one with `random()` per connection and sends it in the welcome frame; both sides then seal
/// and open that connection's UDP datagrams with it. Equality compares in constant time. Treat `bytes` as a
/// secret: never log it.
public struct RelayKey: Sendable, Equatable {
    /// The key as swift-crypto holds it.
    let symmetricKey: SymmetricKey
    /// The key's ChaCha20-Poly1305 context, set up once (see `ChaChaPolyCipher`).
    let cipher: ChaChaPolyCipher

    private init(symmetricKey: SymmetricKey, fastCipher: Bool = true) {
        self.symmetricKey = symmetricKey
        cipher = ChaChaPolyCipher(key: symmetricKey, fast: fastCipher)
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
