import NIOCore

/// Splits a TCP byte stream into ``SessionFrame``s. Feed it bytes as they arrive and take frames out.
///
/// A length prefix of zero or larger than ``SessionFrame/maxLength`` is an error before any of that frame's
/// payload is buffered, so a peer cannot make it hold more than one maximal frame plus what one read brought.
/// Received buffers are kept as they are when no partial frame is pending, so a frame that arrived whole is
/// sliced, not copied, until its message is handed out.
struct SessionFrameDecoder: Sendable {
    private var buffer = ByteBuffer()
    private var failed: SessionProtocolError?

    /// Creates an empty decoder.
    init() {}

    /// The number of buffered bytes not yet returned as frames.
    var bufferedByteCount: Int { buffer.readableBytes }

    /// Appends received bytes.
    mutating func feed(_ bytes: ByteBuffer) {
        guard failed == nil else { return }
        if buffer.readableBytes == 0 {
            buffer = bytes
        } else {
            var bytes = bytes
            buffer.writeBuffer(&bytes)
        }
    }

    /// Appends received bytes.
    mutating func feed(_ bytes: some Sequence<UInt8>) {
        feed(ByteBuffer(bytes: bytes))
    }

    /// The next complete frame, `nil` if more bytes are needed, or an error (then every later call fails too).
    mutating func next() throws(SessionProtocolError) -> SessionFrame? {
        if let failed { throw failed }
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        do throws(SessionProtocolError) {
            guard length > 0 else { throw SessionProtocolError.emptyFrame }
            guard length <= UInt32(SessionFrame.maxLength) else { throw SessionProtocolError.frameTooLong(length) }
            guard buffer.readableBytes - 4 >= Int(length) else {
                compact()
                return nil
            }
            buffer.moveReaderIndex(forwardBy: 4)
            let body = buffer.readSlice(length: Int(length))!
            let frame = try SessionFrame.decode(body: body)
            return frame
        } catch {
            failed = error
            buffer = ByteBuffer()
            throw error
        }
    }

    /// Drops the bytes already read when a partial frame waits, so the buffer does not grow without bound.
    private mutating func compact() {
        if buffer.readerIndex > 0, buffer.readerIndex >= buffer.readableBytes {
            buffer.discardReadBytes()
        }
    }
}
