import CRelayAEAD
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A ChaCha20-Poly1305 (RFC 8439) key with its context set up once: BoringSSL's, which swift-crypto bundles on Linux,
/// where available; otherwise none, and every call goes through swift-crypto's `ChaChaPoly`. Relay datagram keys
/// (`RelayKey`) and LAN session keys use it.
///
/// `seal` and `open` work where the bytes lie, with the 12-byte nonce made of four zero bytes and a 64-bit counter
/// (big-endian): with the kept context they allocate nothing. The caller never seals twice with one counter.
/// `@unchecked Sendable`: the C context is made in `init`, freed in `deinit`, and BoringSSL allows concurrent use between.
package final class ChaChaPolyCipher: @unchecked Sendable {
    /// Bytes of the Poly1305 tag after every sealed message.
    package static let tagSize = 16

    /// The key as swift-crypto holds it.
    let key: SymmetricKey
    /// The context; BoringSSL allows concurrent seals and opens on one. Nil: use swift-crypto.
    let context: OpaquePointer?

    /// A cipher for `key` (32 bytes); with `fast` false it always uses swift-crypto's `ChaChaPoly`, as on platforms
    /// without the kept context (for tests that compare the two).
    package init(key: SymmetricKey, fast: Bool = true) {
        precondition(key.bitCount == 256, "a ChaCha20-Poly1305 key has 256 bits")
        self.key = key
        context = fast ? key.withUnsafeBytes { ogk_relay_aead_new($0.bindMemory(to: UInt8.self).baseAddress) } : nil
    }

    deinit {
        ogk_relay_aead_free(context)
    }

    /// Encrypts the first `count` bytes of `bytes` where they lie and writes the tag right after them, authenticating
    /// `additionalData` as well; `bytes` holds at least `count + tagSize`.
    package func seal(
        _ bytes: UnsafeMutableRawBufferPointer, count: Int, counter: UInt64, authenticating additionalData: UnsafeRawBufferPointer
    ) {
        precondition(bytes.count >= count + Self.tagSize, "no room for the tag")
        Self.withNonce(counter) { nonce in
            guard let context else {
                // Sealing only fails for a key that is not 256 bits, and `init` checked it.
                let box = try! ChaChaPoly.seal(
                    UnsafeRawBufferPointer(rebasing: bytes[..<count]), using: key, nonce: ChaChaPoly.Nonce(data: nonce),
                    authenticating: additionalData)
                box.ciphertext.withUnsafeBytes { bytes.copyMemory(from: $0) }
                box.tag.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: bytes[count...]).copyMemory(from: $0) }
                return
            }
            let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var written = 0
            let sealed = ogk_relay_aead_seal(
                context, base, &written, count + Self.tagSize, nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), base, count,
                additionalData.baseAddress?.assumingMemoryBound(to: UInt8.self), additionalData.count)
            // Sealing fails only for an output too small, and exactly enough is given.
            precondition(sealed == 1 && written == count + Self.tagSize, "ChaCha20-Poly1305 seal failed")
        }
    }

    /// Checks the tag that ends `sealed` (ciphertext, then tag) over the ciphertext and `additionalData`, and if it
    /// matches writes the plaintext to the start of `plaintext` (at least `sealed.count - tagSize` bytes; it may be
    /// `sealed` itself). Returns false, and what `plaintext` holds is undefined, when anything was altered, the key or
    /// the counter is wrong, or `sealed` is shorter than a tag.
    package func open(
        _ sealed: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer, counter: UInt64,
        authenticating additionalData: UnsafeRawBufferPointer
    ) -> Bool {
        guard sealed.count >= Self.tagSize else { return false }
        let count = sealed.count - Self.tagSize
        precondition(plaintext.count >= count, "no room for the plaintext")
        return Self.withNonce(counter) { nonce in
            guard let context else {
                guard
                    let box = try? ChaChaPoly.SealedBox(
                        nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: UnsafeRawBufferPointer(rebasing: sealed[..<count]),
                        tag: UnsafeRawBufferPointer(rebasing: sealed[count...])),
                    let opened = try? ChaChaPoly.open(box, using: key, authenticating: additionalData)
                else { return false }
                opened.withUnsafeBytes { plaintext.copyMemory(from: $0) }
                return true
            }
            var written = 0
            // An empty plaintext may have no address; nothing is written to it, so the input's will do.
            let output = plaintext.baseAddress ?? UnsafeMutableRawPointer(mutating: sealed.baseAddress!)
            let opened = ogk_relay_aead_open(
                context, output.assumingMemoryBound(to: UInt8.self), &written, plaintext.count,
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), sealed.baseAddress!.assumingMemoryBound(to: UInt8.self),
                sealed.count, additionalData.baseAddress?.assumingMemoryBound(to: UInt8.self), additionalData.count)
            return opened == 1 && written == count
        }
    }

    /// Calls `body` with the 12-byte nonce for `counter`: four zero bytes, then the counter big-endian.
    private static func withNonce<Result>(_ counter: UInt64, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var nonce: (UInt32, UInt32, UInt32) = (0, 0, 0)
        return withUnsafeMutableBytes(of: &nonce) { bytes in
            bytes.storeBytes(of: counter.bigEndian, toByteOffset: 4, as: UInt64.self)
            return body(UnsafeRawBufferPointer(bytes))
        }
    }
}
