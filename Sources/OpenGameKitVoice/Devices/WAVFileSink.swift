import Foundation

/// Writes mixed voice as a 48 kHz stereo PCM16 WAV file or pipe.
///
/// On ``close()`` a file's RIFF and data sizes are set to what was written; a pipe cannot be rewound, so
/// its header carries the streaming sizes 0xFFFFFFFF, which readers take as "until end of input".
/// Not thread-safe: write from one thread at a time.
public final class WAVFileSink: VoiceAudioSink {
    private let handle: FileHandle
    private let ownsHandle: Bool
    private let seekable: Bool
    private var dataBytes: UInt64 = 0
    private var closed = false

    /// The frames written so far.
    public private(set) var framesWritten = 0

    /// Creates (or truncates) the WAV file at `path`.
    public convenience init(path: String) throws(VoiceError) {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw VoiceError(.ioFailure, "cannot create WAV file \(path)")
        }
        try self.init(handle: handle, closeHandle: true)
    }

    /// Writes to an open file or pipe; ``close()`` closes the handle only if `closeHandle`.
    public init(handle: FileHandle, closeHandle: Bool = false) throws(VoiceError) {
        self.handle = handle
        self.ownsHandle = closeHandle
        seekable = (try? handle.offset()) != nil
        try write(Self.header(dataBytes: nil))
    }

    deinit { try? close() }

    /// Appends one 1,920-sample interleaved stereo frame.
    public func writeFrame(_ frame: [Int16]) throws(VoiceError) {
        guard !closed else { throw VoiceError(.ioFailure, "the WAV sink is closed") }
        guard frame.count == VoiceFormat.stereoSamplesPerFrame else {
            throw VoiceError(
                .invalidArgument, "a stereo frame is \(VoiceFormat.stereoSamplesPerFrame) samples (20 ms at 48 kHz, interleaved), not \(frame.count)")
        }
        var bytes = [UInt8](repeating: 0, count: frame.count * 2)
        for (i, sample) in frame.enumerated() {
            let u = UInt16(bitPattern: sample)
            bytes[2 * i] = UInt8(u & 0xFF)
            bytes[2 * i + 1] = UInt8(u >> 8)
        }
        try write(bytes)
        dataBytes += UInt64(bytes.count)
        framesWritten += 1
    }

    /// Sets the header's sizes (for a file) and closes the output if the sink owns it; later writes throw.
    public func close() throws(VoiceError) {
        guard !closed else { return }
        closed = true
        if seekable {
            guard dataBytes <= 0xFFFF_FFFF - 36 else {
                throw VoiceError(.ioFailure, "the WAV data (\(dataBytes) bytes) outgrew the 4 GiB a WAV header can describe")
            }
            do {
                try handle.seek(toOffset: 0)
                try handle.write(contentsOf: Self.header(dataBytes: UInt32(dataBytes)))
                try handle.seekToEnd()
            } catch {
                throw VoiceError(.ioFailure, "cannot fix the WAV header sizes: \(error)")
            }
        }
        if ownsHandle {
            do { try handle.close() } catch { throw VoiceError(.ioFailure, "closing the WAV output failed: \(error)") }
        }
    }

    private func write(_ bytes: [UInt8]) throws(VoiceError) {
        do { try handle.write(contentsOf: bytes) } catch {
            throw VoiceError(.ioFailure, "writing the WAV output failed: \(error)")
        }
    }

    /// A 44-byte PCM header; nil sizes are the streaming 0xFFFFFFFF.
    private static func header(dataBytes: UInt32?) -> [UInt8] {
        func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        let rate = UInt32(VoiceFormat.sampleRate)
        return Array("RIFF".utf8) + le32(dataBytes.map { $0 + 36 } ?? 0xFFFF_FFFF) + Array("WAVEfmt ".utf8)
            + le32(16) + le16(1) + le16(2) + le32(rate) + le32(rate * 4) + le16(4) + le16(16)
            + Array("data".utf8) + le32(dataBytes ?? 0xFFFF_FFFF)
    }
}
