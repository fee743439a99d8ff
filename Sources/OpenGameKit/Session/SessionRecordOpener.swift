import GameCenterProtocol
import NIOCore
import OpenGameKitSessionWire

/// Opens the sealed ``SessionRecord``s one side receives, in order: the first must be record 0, the next record 1,
/// and so on. Decrypts into a buffer of its own, reused from record to record.
struct SessionRecordOpener: Sendable {
    private let cipher: ChaChaPolyCipher
    /// The number, and nonce, the next record must have been sealed with.
    private(set) var counter: UInt64
    private var plaintext = ByteBuffer()

    /// An opener whose first record must have number `counter` (0, except in tests of the last numbers).
    init(cipher: ChaChaPolyCipher, counter: UInt64 = 0) {
        self.cipher = cipher
        self.counter = counter
    }

    /// Authenticates and decrypts one record `body` (what followed its length prefix: ciphertext and tag). The
    /// plaintext stays valid until the next call. Throws ``SessionProtocolError/authenticationFailed`` if the record
    /// was altered, truncated, sealed with another key or out of order.
    mutating func open(_ body: ByteBuffer) throws(SessionProtocolError) -> ByteBuffer {
        guard counter < .max else { throw .recordLimitReached }
        let count = body.readableBytes - SessionRecord.tagSize
        guard count >= 0 else { throw .authenticationFailed }
        plaintext.clear()
        var opened = false
        let counter = self.counter
        plaintext.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { output in
            var prefix = UInt32(body.readableBytes).bigEndian
            opened = withUnsafeBytes(of: &prefix) { additionalData in
                body.withUnsafeReadableBytes { sealed in
                    cipher.open(sealed, into: output, counter: counter, authenticating: additionalData)
                }
            }
            return opened ? count : 0
        }
        guard opened else { throw .authenticationFailed }
        self.counter += 1
        return plaintext
    }
}
