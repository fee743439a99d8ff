/// Splits a TCP byte stream into ``SessionFrame``s. Feed it bytes as they arrive and take frames out.
///
/// A length prefix of zero or larger than ``SessionFrame/maxLength`` is an error before any of that frame's
/// payload is buffered, so a peer cannot make it hold more than one maximal frame.
struct SessionFrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var failed: SessionProtocolError?

    /// Creates an empty decoder.
    init() {}

    /// The number of buffered bytes not yet returned as frames.
    var bufferedByteCount: Int { buffer.count - readIndex }

    /// Appends received bytes.
    mutating func feed(_ bytes: some Sequence<UInt8>) {
        guard failed == nil else { return }
        if readIndex > 0, readIndex >= buffer.count / 2 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, `nil` if more bytes are needed, or an error (then every later call fails too).
    mutating func next() throws(SessionProtocolError) -> SessionFrame? {
        if let failed { throw failed }
        guard buffer.count - readIndex >= 4 else { return nil }
        let length = UInt32(buffer[readIndex]) << 24 | UInt32(buffer[readIndex + 1]) << 16
            | UInt32(buffer[readIndex + 2]) << 8 | UInt32(buffer[readIndex + 3])
        do throws(SessionProtocolError) {
            guard length > 0 else { throw SessionProtocolError.emptyFrame }
            guard length <= UInt32(SessionFrame.maxLength) else { throw SessionProtocolError.frameTooLong(length) }
            guard buffer.count - readIndex - 4 >= Int(length) else { return nil }
            let start = readIndex + 4
            let end = start + Int(length)
            let frame = try SessionFrame.decode(body: buffer[start..<end])
            readIndex = end
            return frame
        } catch {
            failed = error
            buffer = []
            readIndex = 0
            throw error
        }
    }
}
