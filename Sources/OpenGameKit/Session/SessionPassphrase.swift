import CryptoExtras
import Foundation

/// A private game's shared passphrase, stretched once per session with scrypt into the key that salts the key
/// derivation of every connection (see ``SessionKeys``). Two sessions only agree on keys when their passphrases,
/// and their session ids, are the same.
///
/// The passphrase is taken in Unicode normalization form C, so the same characters typed on different systems
/// match; it must then have ``allowedByteCounts`` bytes of UTF-8.
struct SessionPassphrase: Sendable {
    /// How many bytes of UTF-8 a passphrase may have.
    static let allowedByteCounts = 8...256
    /// scrypt's cost: 2¹⁵ rounds of 8 blocks, about 32 MiB and a tenth of a second, once per session (what makes
    /// each guess at a passphrase costly for someone who recorded a connection attempt).
    static let scryptRounds = 1 << 15

    /// The stretched passphrase, 32 bytes.
    let key: SymmetricKey

    /// Stretches `passphrase` for the session id `sessionID` (compared without case, as DNS-SD does). Throws
    /// ``GKSessionError`` (`invalidParameter`) for a passphrase of the wrong length, saying what is allowed.
    init(_ passphrase: String, sessionID: String) throws(GKSessionError) {
        let bytes = Array(passphrase.precomposedStringWithCanonicalMapping.utf8)
        guard Self.allowedByteCounts.contains(bytes.count) else {
            throw GKSessionError(
                .invalidParameter,
                "A session passphrase must have \(Self.allowedByteCounts.lowerBound) to \(Self.allowedByteCounts.upperBound) bytes of UTF-8; this one has \(bytes.count)."
            )
        }
        let salt = Array("OpenGameKit session passphrase ".utf8) + Array(sessionID.lowercased().utf8)
        do {
            key = try KDF.Scrypt.deriveKey(from: bytes, salt: salt, outputByteCount: 32, rounds: Self.scryptRounds, blockSize: 8, parallelism: 1)
        } catch {
            throw GKSessionError(.notSupported, "The passphrase could not be stretched (scrypt needs about 32 MiB of memory): \(error).")
        }
    }
}
