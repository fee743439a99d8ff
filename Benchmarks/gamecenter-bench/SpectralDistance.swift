import Foundation

/// The log-spectral distance between speech and its decoded copy: per 10 ms block (480 samples, Hann window, a
/// 512-point FFT), the root mean square of the difference of the two power spectra in dB, averaged over the blocks
/// whose input is louder than −50 dBFS. 0 is identical; codecs that keep the sound but not the waveform score low.
enum SpectralDistance {
    static let block = 480
    static let size = 512

    /// The distance in dB between `input` and `output` shifted back by `delay` samples.
    static func decibels(input: [Int16], output: [Int16], delay: Int) -> Double {
        let window = (0..<block).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(block - 1)) }
        var total = 0.0, blocks = 0
        var start = 0
        while start + block + delay <= output.count, start + block <= input.count {
            let x = input[start..<start + block].map(Double.init)
            let level = (x.reduce(0) { $0 + $1 * $1 } / Double(block)).squareRoot() / 32768
            if level > pow(10, -50.0 / 20) {
                let y = output[start + delay..<start + delay + block].map(Double.init)
                let a = powerDecibels(zip(x, window).map(*)), b = powerDecibels(zip(y, window).map(*))
                let squares = zip(a, b).reduce(0.0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
                total += (squares / Double(a.count)).squareRoot()
                blocks += 1
            }
            start += block
        }
        return blocks > 0 ? total / Double(blocks) : 0
    }

    /// The power spectrum (bins 1…size/2 − 1) of `samples`, zero-padded to `size`, in dB with a floor.
    private static func powerDecibels(_ samples: [Double]) -> [Double] {
        var real = samples + [Double](repeating: 0, count: size - samples.count)
        var imaginary = [Double](repeating: 0, count: size)
        transform(&real, &imaginary)
        return (1..<size / 2).map { 10 * log10(max(real[$0] * real[$0] + imaginary[$0] * imaginary[$0], 1)) }
    }

    /// An in-place iterative radix-2 FFT.
    private static func transform(_ real: inout [Double], _ imaginary: inout [Double]) {
        let n = real.count
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 {
                j ^= bit
                bit >>= 1
            }
            j |= bit
            if i < j {
                real.swapAt(i, j)
                imaginary.swapAt(i, j)
            }
        }
        var length = 2
        while length <= n {
            let angle = -2 * Double.pi / Double(length)
            for start in stride(from: 0, to: n, by: length) {
                for k in 0..<length / 2 {
                    let wr = cos(angle * Double(k)), wi = sin(angle * Double(k))
                    let ur = real[start + k], ui = imaginary[start + k]
                    let vr = real[start + k + length / 2] * wr - imaginary[start + k + length / 2] * wi
                    let vi = real[start + k + length / 2] * wi + imaginary[start + k + length / 2] * wr
                    real[start + k] = ur + vr
                    imaginary[start + k] = ui + vi
                    real[start + k + length / 2] = ur - vr
                    imaginary[start + k + length / 2] = ui - vi
                }
            }
            length <<= 1
        }
    }
}
