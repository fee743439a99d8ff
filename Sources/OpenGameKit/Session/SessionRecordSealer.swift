import GameCenterProtocol
import NIOCore
import OpenGameKitSessionWire

/// Seals what one side sends on a session connection after the handshake: each frame becomes one ``SessionRecord``,
/// written and encrypted where it lies in the outgoing buffer (nothing is allocated or copied), numbered by the
/// record count of this direction.
struct SessionRecordSealer: Sendable {
    private let cipher: ChaChaPolyCipher
    /// The number, and nonce, of the next record.
    private(set) var counter: UInt64

    /// A sealer whose first record gets number `counter` (0, except in tests of the last numbers).
    init(cipher: ChaChaPolyCipher, counter: UInt64 = 0) {
        self.cipher = cipher
        self.counter = counter
    }

    /// Appends one sealed record to `buffer` whose plaintext is what `encode` appends (nothing: the empty
    /// confirmation record). Returns false, and leaves `buffer` as it was, once this direction has used its last
    /// number: the connection must then be closed, as a nonce is never reused.
    mutating func write(into buffer: inout ByteBuffer, _ encode: (inout ByteBuffer) -> Void) -> Bool {
        guard counter < .max else { return false }
        let start = buffer.writerIndex
        buffer.writeInteger(UInt32(0))
        encode(&buffer)
        let count = buffer.writerIndex - start - SessionRecord.lengthPrefixSize
        buffer.setInteger(UInt32(count + SessionRecord.tagSize), at: start)
        buffer.writeRepeatingByte(0, count: SessionRecord.tagSize)
        let offset = start - buffer.readerIndex
        buffer.withUnsafeMutableReadableBytes { bytes in
            let record = UnsafeMutableRawBufferPointer(rebasing: bytes[offset...])
            cipher.seal(
                UnsafeMutableRawBufferPointer(rebasing: record[SessionRecord.lengthPrefixSize...]), count: count, counter: counter,
                authenticating: UnsafeRawBufferPointer(rebasing: record[..<SessionRecord.lengthPrefixSize]))
        }
        counter += 1
        return true
    }
}
