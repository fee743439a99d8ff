/// Appends UTF-8 bytes into memory that `String(unsafeUninitializedCapacity:initializingUTF8With:)` hands out.
///
/// The caller sizes the buffer with an upper bound first, so appends do not check capacity in release builds.
struct UTF8Writer {
    /// The buffer being filled.
    let buffer: UnsafeMutableBufferPointer<UInt8>
    /// How many bytes have been written from the start of `buffer`.
    private(set) var count = 0

    /// Starts writing at the beginning of `buffer`.
    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    /// Appends one byte.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        assert(count < buffer.count)
        buffer[count] = byte
        count &+= 1
    }

    /// Appends a run of bytes from raw memory.
    @inline(__always)
    mutating func append(contentsOf source: UnsafeBufferPointer<UInt8>) {
        guard let from = source.baseAddress, source.count > 0 else { return }
        assert(count + source.count <= buffer.count)
        (buffer.baseAddress! + count).update(from: from, count: source.count)
        count &+= source.count
    }

    /// Appends `count` bytes from `source`; byte by byte, as the runs are short and a `memmove` call costs more.
    @inline(__always)
    mutating func append(_ source: UnsafePointer<UInt8>, count length: Int) {
        assert(count + length <= buffer.count)
        let destination = buffer.baseAddress! + count
        for index in 0..<length { destination[index] = source[index] }
        count &+= length
    }

    /// Reserves `length` bytes at the current end and returns the offset of the first one, for right-to-left filling.
    @inline(__always)
    mutating func reserve(_ length: Int) -> Int {
        assert(count + length <= buffer.count)
        let start = count
        count &+= length
        return start
    }
}
