import Foundation
import OpenGameKitVoice

/// Speech rendering, file helpers and similarity measures shared by the voice tests.
public enum TestAudio {
    public static let espeak = "/usr/bin/espeak-ng"
    public static var hasEspeak: Bool { FileManager.default.isExecutableFile(atPath: espeak) }
    public static let opusdec = "/usr/bin/opusdec"
    public static var hasOpusdec: Bool { FileManager.default.isExecutableFile(atPath: opusdec) }

    /// Speech with pauses (SSML breaks), as espeak-ng renders it: 22,050 Hz mono PCM16.
    public static let sentences = """
        <speak>Hello there, can you hear me?<break time="900ms"/>\
        The quick brown fox jumps over the lazy dog.<break time="1200ms"/>\
        Meet me by the old tower, and bring the blue key.<break time="700ms"/>\
        Seven, eight, nine, ten.</speak>
        """

    public static func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "ogk-voice-\(UUID().uuidString)-\(name)"
    }

    public static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw VoiceError(.ioFailure, "\(executable) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
    }

    /// Renders `text` (SSML) with espeak-ng to a WAV file and returns its path.
    public static func speak(_ text: String = sentences) throws -> String {
        let path = temporaryPath("speech.wav")
        try run(espeak, ["-m", "-w", path, text])
        return path
    }

    /// A PCM16 WAV file's bytes (with a LIST chunk before the data, as many writers add); `dataSize` overrides the
    /// data chunk's size (0xFFFF_FFFF: a stream of unknown length).
    public static func wav(rate: Int, channels: Int, samples: [Int16], dataSize: UInt32? = nil) -> [UInt8] {
        func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        let data = samples.flatMap { le16(UInt16(bitPattern: $0)) }
        let size = dataSize ?? UInt32(data.count)
        return Array("RIFF".utf8) + le32(size &+ 36) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(UInt16(channels))
            + le32(UInt32(rate)) + le32(UInt32(rate * channels * 2)) + le16(UInt16(channels * 2)) + le16(16)
            + Array("LIST".utf8) + le32(3) + [1, 2, 3, 0] + Array("data".utf8) + le32(size) + data
    }

    /// A tone of `frequency` Hz, on for `onMilliseconds` and off as long, for `seconds`, at `amplitude` (0…1) of full
    /// scale, 48 kHz mono: a signal whose envelope a listener's output must follow.
    public static func pulsedTone(frequency: Double, amplitude: Double = 0.3, onMilliseconds: Int = 400, seconds: Double) -> [Int16] {
        let period = 2 * onMilliseconds * VoiceFormat.sampleRate / 1000
        return (0..<Int(seconds * Double(VoiceFormat.sampleRate))).map { i in
            guard i % period < period / 2 else { return 0 }
            return Int16(amplitude * 32_767 * sin(2 * Double.pi * frequency * Double(i) / Double(VoiceFormat.sampleRate)))
        }
    }

    /// Writes `samples` (48 kHz mono) to a new WAV file and returns its path.
    public static func wavFile(_ samples: [Int16], name: String) throws -> String {
        let path = temporaryPath(name)
        try Data(wav(rate: VoiceFormat.sampleRate, channels: 1, samples: samples)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// All frames of a source, concatenated.
    public static func readAll(_ source: some VoiceAudioSource) throws -> [Int16] {
        var samples: [Int16] = []
        while case .frame(let frame) = try source.readFrame() { samples += frame }
        return samples
    }

    /// RMS per block of `block` samples.
    public static func envelope(_ x: [Int16], block: Int = 480) -> [Double] {
        stride(from: 0, to: x.count - block + 1, by: block).map { start in
            var sum = 0.0
            for i in start..<start + block { sum += Double(x[i]) * Double(x[i]) }
            return (sum / Double(block)).squareRoot()
        }
    }

    /// Pearson correlation of `a[i]` with `b[i + lag]` over their overlap.
    public static func correlation(_ a: [Double], _ b: [Double], lag: Int) -> Double {
        let n = min(a.count, b.count - lag)
        guard n > 1, lag >= 0 else { return 0 }
        var ma = 0.0, mb = 0.0
        for i in 0..<n { ma += a[i]; mb += b[i + lag] }
        ma /= Double(n); mb /= Double(n)
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for i in 0..<n {
            let da = a[i] - ma, db = b[i + lag] - mb
            sab += da * db; saa += da * da; sbb += db * db
        }
        return saa > 0 && sbb > 0 ? sab / (saa * sbb).squareRoot() : 0
    }

    /// How `output` matches `input` once its delay (0…`maxDelay` samples) is compensated.
    ///
    /// The jitter buffer may shift its delay by a frame in a pause, so each 2 s segment of the input finds its own
    /// delay: first on the 10 ms envelope, then to the sample within ±10 ms on the waveform. The figures are
    /// the segments' correlations weighted by their energy; `delay` is the first segment's.
    public static func similarity(input: [Int16], output: [Int16], maxDelay: Int = 9_600, segment: Int = 96_000) -> (
        delay: Int, envelope: Double, waveform: Double
    ) {
        let block = 480
        let a = input.map(Float.init), b = output.map(Float.init)
        func pearson(_ x: ArraySlice<Double>, _ y: ArraySlice<Double>) -> Double {
            correlation(Array(x), Array(y), lag: 0)
        }
        func wave(_ start: Int, _ length: Int, _ delay: Int) -> Double {
            guard start + delay + length <= b.count else { return 0 }
            return a.withUnsafeBufferPointer { a in
                b.withUnsafeBufferPointer { b in
                    var sab: Float = 0, saa: Float = 0, sbb: Float = 0
                    for i in start..<start + length {
                        let x = a[i], y = b[i + delay]
                        sab += x * y; saa += x * x; sbb += y * y
                    }
                    return saa > 0 && sbb > 0 ? Double(sab / (saa * sbb).squareRoot()) : 0
                }
            }
        }
        let ea = envelope(input, block: block), eb = envelope(output, block: block)
        var weightSum = 0.0, envelopeSum = 0.0, waveSum = 0.0
        var firstDelay: Int?
        for start in stride(from: 0, to: input.count - segment / 2, by: segment) {
            let length = min(segment, input.count - start)
            let weight = a[start..<start + length].reduce(0.0) { $0 + Double($1) * Double($1) }
            let blocks = start / block..<(start + length) / block
            guard weight > 0, blocks.upperBound <= ea.count else { continue }
            var bestLag = 0, bestEnvelope = -1.0
            for lag in 0...(maxDelay / block) where blocks.upperBound + lag <= eb.count {
                let c = pearson(ea[blocks], eb[(blocks.lowerBound + lag)..<(blocks.upperBound + lag)])
                if c > bestEnvelope { bestEnvelope = c; bestLag = lag }
            }
            var bestWave = -1.0, bestDelay = 0
            let centre = bestLag * block
            // Steps of 2 samples, then the neighbours of the best.
            for delay in stride(from: max(0, centre - block), through: centre + block, by: 2) {
                let c = wave(start, length, delay)
                if c > bestWave { bestWave = c; bestDelay = delay }
            }
            for delay in [bestDelay - 1, bestDelay + 1] where delay >= 0 {
                let c = wave(start, length, delay)
                if c > bestWave { bestWave = c; bestDelay = delay }
            }
            firstDelay = firstDelay ?? bestDelay
            weightSum += weight
            envelopeSum += weight * bestEnvelope
            waveSum += weight * bestWave
        }
        guard weightSum > 0 else { return (0, 0, 0) }
        return (firstDelay ?? 0, envelopeSum / weightSum, waveSum / weightSum)
    }
}
