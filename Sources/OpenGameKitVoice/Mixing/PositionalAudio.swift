import Foundation

/// Places voices in 3-D: OpenAL's distance attenuation and an equal-power stereo pan from each source's
/// direction as the listener hears it.
///
/// Coordinates follow OpenAL: the listener faces −Z with +Y up by default, so +X is to the right.
public struct PositionalAudio: Sendable, Equatable {
    /// OpenAL's distance models, in their clamped form (the distance is held to reference…max distance).
    public enum DistanceModel: Sendable, Equatable {
        /// `ref / (ref + rolloff · (d − ref))` (AL_INVERSE_DISTANCE_CLAMPED, OpenAL's default).
        case inverse
        /// `1 − rolloff · (d − ref) / (max − ref)` (AL_LINEAR_DISTANCE_CLAMPED).
        case linear
        /// `(d / ref) ^ −rolloff` (AL_EXPONENT_DISTANCE_CLAMPED).
        case exponential
    }

    /// How a source is heard: the ``VoiceMixer/StreamSettings`` gain and pan for it.
    public struct Placement: Sendable, Equatable {
        /// Distance attenuation, 0…1.
        public var gain: Float
        /// Stereo position, −1 (left) … 1 (right).
        public var pan: Float
    }

    /// The attenuation model.
    public var model: DistanceModel
    /// The distance at which the gain is 1 (must be > 0).
    public var referenceDistance: Float
    /// The distance beyond which a source gets no quieter (must be ≥ the reference distance).
    public var maxDistance: Float
    /// How fast the gain falls with distance (≥ 0).
    public var rolloff: Float
    /// Where the listener is.
    public var listenerPosition = SIMD3<Float>(0, 0, 0)
    /// Where the listener faces (need not be unit length).
    public private(set) var listenerForward = SIMD3<Float>(0, 0, -1)
    /// The listener's up (need not be unit length, nor exactly orthogonal to forward).
    public private(set) var listenerUp = SIMD3<Float>(0, 1, 0)

    /// Creates a model: inverse, reference distance 1 and rolloff 1 by default as in OpenAL, max distance 100 (OpenAL's is unbounded).
    public init(model: DistanceModel = .inverse, referenceDistance: Float = 1, maxDistance: Float = 100, rolloff: Float = 1) throws(VoiceError) {
        guard referenceDistance > 0, referenceDistance.isFinite else {
            throw VoiceError(.invalidArgument, "reference distance must be a finite number above 0, not \(referenceDistance)")
        }
        guard maxDistance >= referenceDistance, maxDistance.isFinite else {
            throw VoiceError(.invalidArgument, "max distance must be finite and ≥ the reference distance (\(referenceDistance)), not \(maxDistance)")
        }
        guard rolloff >= 0, rolloff.isFinite else {
            throw VoiceError(.invalidArgument, "rolloff must be a finite number ≥ 0, not \(rolloff)")
        }
        self.model = model
        self.referenceDistance = referenceDistance
        self.maxDistance = maxDistance
        self.rolloff = rolloff
    }

    /// Turns the listener; `forward` and `up` must be non-zero and not parallel.
    public mutating func orientListener(forward: SIMD3<Float>, up: SIMD3<Float>) throws(VoiceError) {
        let right = Self.cross(forward, up)
        guard (right * right).sum() > 1e-12 else {
            throw VoiceError(.invalidArgument, "listener forward \(forward) and up \(up) must be non-zero and not parallel")
        }
        listenerForward = forward
        listenerUp = up
    }

    /// The gain at `distance` under the model.
    public func gain(atDistance distance: Float) -> Float {
        let d = min(max(distance, referenceDistance), maxDistance)
        let g: Float
        switch model {
        case .inverse:
            g = referenceDistance / (referenceDistance + rolloff * (d - referenceDistance))
        case .linear:
            g = maxDistance > referenceDistance ? 1 - rolloff * (d - referenceDistance) / (maxDistance - referenceDistance) : 1
        case .exponential:
            g = pow(d / referenceDistance, -rolloff)
        }
        return min(max(g, 0), 1)
    }

    /// The gain and pan for a source at `position`; a source at the listener's position is centred.
    public func placement(of position: SIMD3<Float>) -> Placement {
        let offset = position - listenerPosition
        let distance = (offset * offset).sum().squareRoot()
        guard distance > 1e-6 else { return Placement(gain: gain(atDistance: 0), pan: 0) }
        let right = Self.cross(listenerForward, listenerUp)
        let rightUnit = right / (right * right).sum().squareRoot()
        let pan = min(max((offset * rightUnit).sum() / distance, -1), 1)
        return Placement(gain: gain(atDistance: distance), pan: pan)
    }

    private static func cross(_ a: SIMD3<Float>, _ b: SIMD3<Float>) -> SIMD3<Float> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }
}
