import Foundation

/// Reads a PCM16 WAV file or pipe of any sample rate and channel count as 48 kHz mono 20 ms frames
/// (channels averaged, rate converted).
///
/// A stream whose data size is unknown (0 or 0xFFFFFFFF, as a pipe writer leaves it) is read to end of input.
/// At the end it reports ``VoiceFrameRead/end`` (the last frame padded with silence), or starts over when
/// looping, which needs a seekable file. Not thread-safe: read from one thread at a time.
public final class WAVFileSource: VoiceAudioSource {
    /// The file's sample rate in Hz.
    public let fileSampleRate: Int
    /// The file's channel count.
    public let fileChannels: Int

    private let handle: FileHandle
    private let closeOnDeinit: Bool
    private let loop: Bool
    private let dataStart: UInt64
    private let dataLength: Int?
    private var dataRead = 0
    private var resampler: Resampler?
    private var pending: [Int16] = []
    private var ended = false

    /// Opens the WAV file at `path`; `loop` starts over at the end instead of reporting it.
    public convenience init(path: String, loop: Bool = false) throws(VoiceError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw VoiceError(.ioFailure, "cannot open WAV file \(path) for reading")
        }
        try self.init(handle: handle, loop: loop, closeOnDeinit: true)
    }

    /// Reads WAV from an open file or pipe; `loop` needs a seekable file. The handle stays open unless `closeOnDeinit`.
    public init(handle: FileHandle, loop: Bool = false, closeOnDeinit: Bool = false) throws(VoiceError) {
        self.handle = handle
        self.closeOnDeinit = closeOnDeinit
        self.loop = loop
        var consumed: UInt64 = 0
        func read(_ count: Int) throws(VoiceError) -> [UInt8] {
            let bytes = try Self.readFully(handle, count)
            guard bytes.count == count else {
                throw VoiceError(.unsupportedFormat, "the WAV header ends early: \(consumed + UInt64(bytes.count)) bytes")
            }
            consumed += UInt64(count)
            return bytes
        }
        let riff = try read(12)
        guard riff[0..<4].elementsEqual("RIFF".utf8), riff[8..<12].elementsEqual("WAVE".utf8) else {
            throw VoiceError(.unsupportedFormat, "not a WAV file: it must start with RIFF…WAVE")
        }
        var format: (channels: Int, rate: Int)?
        while true {
            let header = try read(8)
            let id = String(decoding: header[0..<4], as: UTF8.self)
            let size = Self.u32(header, 4)
            if id == "data" {
                guard let format else {
                    throw VoiceError(.unsupportedFormat, "the WAV data chunk comes before its fmt chunk")
                }
                fileChannels = format.channels
                fileSampleRate = format.rate
                dataStart = consumed
                dataLength = size == 0 || size == 0xFFFF_FFFF ? nil : Int(size)
                break
            }
            guard size < 1 << 20 else {
                throw VoiceError(.unsupportedFormat, "WAV chunk \(id) claims \(size) bytes before the audio; at most 1 MiB is allowed")
            }
            let body = try read(Int(size) + Int(size & 1))
            if id == "fmt " {
                guard body.count >= 16 else { throw VoiceError(.unsupportedFormat, "the WAV fmt chunk is \(body.count) bytes; at least 16 are needed") }
                var tag = Int(Self.u16(body, 0))
                if tag == 0xFFFE, body.count >= 26 { tag = Int(Self.u16(body, 24)) }
                let channels = Int(Self.u16(body, 2)), rate = Int(Self.u32(body, 4)), bits = Int(Self.u16(body, 14))
                guard tag == 1, bits == 16 else {
                    throw VoiceError(.unsupportedFormat, "WAV format \(tag) with \(bits)-bit samples is not supported; only PCM (1) with 16-bit samples is")
                }
                guard (1...32).contains(channels) else {
                    throw VoiceError(.unsupportedFormat, "a WAV file with \(channels) channels is not supported; 1…32 are")
                }
                guard Resampler.rateRange.contains(rate) else {
                    throw VoiceError(
                        .unsupportedFormat,
                        "WAV sample rate \(rate) Hz is not supported; \(Resampler.rateRange.lowerBound)…\(Resampler.rateRange.upperBound) Hz are")
                }
                format = (channels, rate)
            }
        }
        if loop, (try? handle.seek(toOffset: dataStart)) == nil {
            throw VoiceError(.invalidArgument, "looping needs a seekable WAV file; a pipe can be read only once")
        }
        resampler = fileSampleRate == VoiceFormat.sampleRate ? nil : try Resampler(from: fileSampleRate, to: VoiceFormat.sampleRate)
    }

    deinit { if closeOnDeinit { try? handle.close() } }

    /// The next 48 kHz mono frame, or ``VoiceFrameRead/end`` (never ``VoiceFrameRead/pending``).
    public func readFrame() throws(VoiceError) -> VoiceFrameRead {
        let frameLength = VoiceFormat.samplesPerFrame
        while pending.count < frameLength, !ended {
            try fill()
        }
        if pending.isEmpty { return .end }
        if pending.count < frameLength { pending += repeatElement(0, count: frameLength - pending.count) }
        let frame = Array(pending[0..<frameLength])
        pending.removeFirst(frameLength)
        return .frame(frame)
    }

    private func fill() throws(VoiceError) {
        let blockAlign = 2 * fileChannels
        var want = 4096 * blockAlign
        if let dataLength { want = min(want, dataLength - dataRead) }
        var bytes = want > 0 ? try Self.readFully(handle, want) : []
        bytes.removeLast(bytes.count % blockAlign)
        dataRead += bytes.count
        if bytes.isEmpty {
            if loop, dataRead > 0 {
                do { try handle.seek(toOffset: dataStart) } catch { throw VoiceError(.ioFailure, "cannot rewind the WAV file to loop: \(error)") }
                dataRead = 0
                return
            }
            if let resampler { pending += resampler.flush() }
            ended = true
            return
        }
        var mono = [Int16](repeating: 0, count: bytes.count / blockAlign)
        for i in 0..<mono.count {
            var sum = 0
            for c in 0..<fileChannels {
                sum += Int(Int16(bitPattern: Self.u16(bytes, i * blockAlign + 2 * c)))
            }
            mono[i] = Int16(sum / fileChannels)
        }
        pending += resampler?.process(mono) ?? mono
    }

    private static func readFully(_ handle: FileHandle, _ count: Int) throws(VoiceError) -> [UInt8] {
        var result: [UInt8] = []
        while result.count < count {
            let chunk: Data?
            do { chunk = try handle.read(upToCount: count - result.count) } catch {
                throw VoiceError(.ioFailure, "reading the WAV input failed: \(error)")
            }
            guard let chunk, !chunk.isEmpty else { break }
            result += chunk
        }
        return result
    }

    private static func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    private static func u32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }
}
