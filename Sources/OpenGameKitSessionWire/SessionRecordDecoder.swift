import NIOCore

/// Splits a session connection's TCP byte stream into ``SessionRecord``s. Feed it bytes as they arrive and take
/// records out, each handed to a closure as its body (the bytes after the length prefix).
///
/// A length prefix of zero or larger than ``SessionRecord/maxLength`` is an error before any of that record's
/// payload is buffered, so a peer cannot make it hold more than one maximal record plus what one read brought.
/// A record that arrived whole is sliced out of the received buffer, not copied. Only a record split across reads is
/// copied, once, into a buffer of its own (reused for the next split record), taking from the next read just the
/// bytes that record still lacks.
package struct SessionRecordDecoder: Sendable {
    /// Received bytes not yet looked at.
    private var input = ByteBuffer()
    /// The start of a record split across reads.
    private var split = ByteBuffer()
    private var failed: SessionProtocolError?

    /// Creates an empty decoder.
    package init() {}

    /// The number of buffered bytes not yet handed out as records.
    package var bufferedByteCount: Int { input.readableBytes + split.readableBytes }

    /// Appends received bytes.
    package mutating func feed(_ bytes: ByteBuffer) {
        guard failed == nil else { return }
        if input.readableBytes == 0 {
            input = bytes
        } else {
            var bytes = bytes
            input.writeBuffer(&bytes)
        }
    }

    /// Appends received bytes.
    package mutating func feed(_ bytes: some Sequence<UInt8>) {
        feed(ByteBuffer(bytes: bytes))
    }

    /// Hands the next complete record's body to `read` and returns what it returns; `nil` if more bytes are needed.
    /// An invalid length, or an error `read` throws, is thrown, and then every later call fails too.
    package mutating func next<Result>(_ read: (ByteBuffer) throws(SessionProtocolError) -> Result) throws(SessionProtocolError) -> Result? {
        if let failed { throw failed }
        do throws(SessionProtocolError) {
            if split.readableBytes > 0 {
                return try nextSplitRecord(read)
            }
            guard let length = try Self.recordLength(in: input), input.readableBytes >= SessionRecord.lengthPrefixSize + length else {
                // An incomplete record: keep its bytes apart from the next read's.
                split.clear()
                split.writeBuffer(&input)
                return nil
            }
            input.moveReaderIndex(forwardBy: SessionRecord.lengthPrefixSize)
            return try read(input.readSlice(length: length)!)
        } catch {
            failed = error
            input = ByteBuffer()
            split = ByteBuffer()
            throw error
        }
    }

    /// Completes the split record with as many bytes of `input` as it lacks; reads it once whole.
    private mutating func nextSplitRecord<Result>(_ read: (ByteBuffer) throws(SessionProtocolError) -> Result) throws(SessionProtocolError) -> Result? {
        let prefixSize = SessionRecord.lengthPrefixSize
        if split.readableBytes < prefixSize {
            var prefix = input.readSlice(length: min(prefixSize - split.readableBytes, input.readableBytes))!
            split.writeBuffer(&prefix)
        }
        guard let length = try Self.recordLength(in: split) else { return nil }
        split.reserveCapacity(minimumWritableBytes: prefixSize + length - split.readableBytes)
        var rest = input.readSlice(length: min(prefixSize + length - split.readableBytes, input.readableBytes))!
        split.writeBuffer(&rest)
        guard split.readableBytes == prefixSize + length else { return nil }
        split.moveReaderIndex(forwardBy: prefixSize)
        let result = try read(split.readSlice(length: length)!)
        split.clear()
        return result
    }

    /// The length field at the start of `buffer`, checked; `nil` while fewer than 4 bytes are there.
    private static func recordLength(in buffer: ByteBuffer) throws(SessionProtocolError) -> Int? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        guard length > 0 else { throw .emptyRecord }
        guard length <= UInt32(SessionRecord.maxLength) else { throw .recordTooLong(length) }
        return Int(length)
    }
}
