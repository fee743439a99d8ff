import Foundation

/// Mixes mono voice streams into one interleaved stereo 48 kHz frame, with per-stream gain, mute and pan,
/// summing in Float and soft-limiting so loud sums never clip.
///
/// Streams are named by a string (a player ID). Not thread-safe: use from one thread or task at a time.
public struct VoiceMixer: Sendable {
    /// How one stream is placed in the mix.
    public struct StreamSettings: Sendable, Equatable {
        /// Linear gain, 0…4 (1 = as received); positional attenuation goes here.
        public var gain: Float = 1
        /// Whether the local player muted this stream.
        public var muted = false
        /// Stereo position, −1 (left) … 0 (centre) … 1 (right), equal-power.
        public var pan: Float = 0

        /// Centred, unmuted, at unity gain.
        public init() {}
    }

    /// The level above which the limiter starts to bend the signal (fraction of full scale).
    public static let limiterThreshold: Float = 0.75
    /// The level the limiter approaches but never reaches (fraction of full scale, −0.18 dBFS).
    public static let limiterCeiling: Float = 0.98

    /// The channel's volume, 0…1, applied to every stream.
    public private(set) var channelVolume: Float = 1
    private var settings: [String: StreamSettings] = [:]

    /// Creates a mixer with every stream centred at unity gain.
    public init() {}

    /// Sets the channel's volume, 0…1.
    public mutating func setChannelVolume(_ volume: Float) throws(VoiceError) {
        guard (0...1).contains(volume) else {
            throw VoiceError(.invalidArgument, "channel volume must be 0…1, not \(volume)")
        }
        channelVolume = volume
    }

    /// Sets how `stream` is mixed; gain 0…4, pan −1…1.
    public mutating func set(_ streamSettings: StreamSettings, for stream: String) throws(VoiceError) {
        guard (0...4).contains(streamSettings.gain) else {
            throw VoiceError(.invalidArgument, "stream gain must be 0…4, not \(streamSettings.gain)")
        }
        guard (-1...1).contains(streamSettings.pan) else {
            throw VoiceError(.invalidArgument, "pan must be −1 (left)…1 (right), not \(streamSettings.pan)")
        }
        settings[stream] = streamSettings
    }

    /// The settings of `stream` (the defaults if never set).
    public func settings(for stream: String) -> StreamSettings { settings[stream] ?? StreamSettings() }

    /// Forgets the settings of a stream that left.
    public mutating func remove(_ stream: String) { settings[stream] = nil }

    /// Mixes 960-sample mono frames into one 1,920-sample interleaved stereo frame (left first).
    ///
    /// A frame of the wrong length throws; no frames give silence.
    public func mix(_ frames: [String: [Int16]]) throws(VoiceError) -> [Int16] {
        var left = [Float](repeating: 0, count: VoiceFormat.samplesPerFrame)
        var right = left
        for (stream, frame) in frames {
            guard frame.count == VoiceFormat.samplesPerFrame else {
                throw VoiceError(.invalidArgument, "stream \(stream)'s frame is \(frame.count) samples; a mono frame is \(VoiceFormat.samplesPerFrame)")
            }
            let s = settings(for: stream)
            guard !s.muted else { continue }
            let (l, r) = Self.equalPower(pan: s.pan)
            let gain = channelVolume * s.gain / 32768
            let gl = gain * l, gr = gain * r
            for i in 0..<frame.count {
                let x = Float(frame[i])
                left[i] += x * gl
                right[i] += x * gr
            }
        }
        var out = [Int16](repeating: 0, count: VoiceFormat.stereoSamplesPerFrame)
        for i in 0..<VoiceFormat.samplesPerFrame {
            out[2 * i] = Int16(Self.limit(left[i]) * 32767)
            out[2 * i + 1] = Int16(Self.limit(right[i]) * 32767)
        }
        return out
    }

    /// Equal-power gains (left, right) for a pan of −1…1: cos and sin of (pan + 1)·π/4, so left² + right² = 1.
    public static func equalPower(pan: Float) -> (left: Float, right: Float) {
        let angle = (min(max(pan, -1), 1) + 1) * Float.pi / 4
        return (cos(angle), sin(angle))
    }

    /// Soft limiter: linear below ``limiterThreshold``, then a tanh knee that approaches ``limiterCeiling``.
    static func limit(_ x: Float) -> Float {
        let t = limiterThreshold, c = limiterCeiling
        let magnitude = abs(x)
        guard magnitude > t else { return x }
        let bent = t + (c - t) * tanh((magnitude - t) / (c - t))
        return x < 0 ? -bent : bent
    }
}
