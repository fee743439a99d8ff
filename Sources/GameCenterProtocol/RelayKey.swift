import Crypto

/// A datagram key: 32 random bytes shared by one relay connection's device and the server.
///
/// The server makes one with `random()` per connection and sends it in the welcome frame; both sides then seal
/// and open that connection's UDP datagrams with it. Equality compares in constant time. Treat `bytes` as a
/// secret: never log it.
public struct RelayKey: Sendable, Equatable {
    /// The key as swift-crypto holds it, so sealing needs no conversion per datagram.
    let symmetricKey: SymmetricKey

    private init(symmetricKey: SymmetricKey) {
        self.symmetricKey = symmetricKey
    }

    /// Makes a fresh key from the system's secure random number generator.
    public static func random() -> RelayKey {
        RelayKey(symmetricKey: SymmetricKey(size: .bits256))
    }

    /// Wraps received key bytes; nil unless there are exactly 32.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        self.init(symmetricKey: SymmetricKey(data: Array(bytes)))
    }

    /// The key's 32 bytes, as the welcome frame carries them.
    public var bytes: [UInt8] {
        symmetricKey.withUnsafeBytes { Array($0) }
    }
}
