import NIOCore

/// Splits a TCP byte stream into ``SessionFrame``s. Feed it bytes as they arrive and take frames out.
///
/// A length prefix of zero or larger than ``SessionFrame/maxLength`` is an error before any of that frame's
/// payload is buffered, so a peer cannot make it hold more than one maximal frame plus what one read brought.
/// A frame that arrived whole is sliced out of the received buffer, not copied. Only a frame split across reads is
/// copied, once, into a buffer of its own (reused for the next split frame), taking from the next read just the
/// bytes that frame still lacks.
package struct SessionFrameDecoder: Sendable {
    /// Received bytes not yet looked at.
    private var input = ByteBuffer()
    /// The start of a frame split across reads.
    private var split = ByteBuffer()
    private var failed: SessionProtocolError?

    /// Creates an empty decoder.
    package init() {}

    /// The number of buffered bytes not yet returned as frames.
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
    mutating func feed(_ bytes: some Sequence<UInt8>) {
        feed(ByteBuffer(bytes: bytes))
    }

    /// The next complete frame, `nil` if more bytes are needed, or an error (then every later call fails too).
    package mutating func next() throws(SessionProtocolError) -> SessionFrame? {
        if let failed { throw failed }
        do throws(SessionProtocolError) {
            if split.readableBytes > 0 {
                return try nextSplitFrame()
            }
            guard let length = try Self.frameLength(in: input), input.readableBytes >= 4 + length else {
                // An incomplete frame: keep its bytes apart from the next read's.
                split.clear()
                split.writeBuffer(&input)
                return nil
            }
            input.moveReaderIndex(forwardBy: 4)
            return try SessionFrame.decode(body: input.readSlice(length: length)!)
        } catch {
            failed = error
            input = ByteBuffer()
            split = ByteBuffer()
            throw error
        }
    }

    /// Completes the split frame with as many bytes of `input` as it lacks; returns it once whole.
    private mutating func nextSplitFrame() throws(SessionProtocolError) -> SessionFrame? {
        if split.readableBytes < 4 {
            var prefix = input.readSlice(length: min(4 - split.readableBytes, input.readableBytes))!
            split.writeBuffer(&prefix)
        }
        guard let length = try Self.frameLength(in: split) else { return nil }
        split.reserveCapacity(minimumWritableBytes: 4 + length - split.readableBytes)
        var rest = input.readSlice(length: min(4 + length - split.readableBytes, input.readableBytes))!
        split.writeBuffer(&rest)
        guard split.readableBytes == 4 + length else { return nil }
        split.moveReaderIndex(forwardBy: 4)
        let frame = try SessionFrame.decode(body: split.readSlice(length: length)!)
        split.clear()
        return frame
    }

    /// The length field at the start of `buffer`, checked; `nil` while fewer than 4 bytes are there.
    private static func frameLength(in buffer: ByteBuffer) throws(SessionProtocolError) -> Int? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        guard length > 0 else { throw .emptyFrame }
        guard length <= UInt32(SessionFrame.maxLength) else { throw .frameTooLong(length) }
        return Int(length)
    }
}
