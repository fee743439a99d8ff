import Foundation
import Testing
@testable import OpenGameKitVoice
import VoiceTestSupport

@Suite struct MixingTests {
    static func sine(frequency: Double, amplitude: Double) -> [Int16] {
        (0..<960).map { Int16(amplitude * 32767 * sin(2 * .pi * frequency * Double($0) / 48_000)) }
    }

    static func channels(_ stereo: [Int16]) -> (left: [Int16], right: [Int16]) {
        (stride(from: 0, to: stereo.count, by: 2).map { stereo[$0] }, stride(from: 1, to: stereo.count, by: 2).map { stereo[$0] })
    }

    static func rms(_ x: [Int16]) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    @Test func aSumThatWouldClipDoesNot() throws {
        var mixer = VoiceMixer()
        for name in ["a", "b", "c"] { try mixer.set(VoiceMixer.StreamSettings(), for: name) }
        let loud = Self.sine(frequency: 300, amplitude: 0.9)
        let out = try mixer.mix(["a": loud, "b": loud, "c": loud])
        let (left, _) = Self.channels(out)
        // Centred at equal power each channel gets 0.707 of each stream: 3 × 0.9 × 0.707 ≈ 1.9 × full scale.
        let naive = loud.map { Int(3 * Double($0) * 0.7071) }
        let wouldClip = naive.filter { abs($0) > 32767 }.count
        #expect(wouldClip > 100, "the test sum must exceed full scale: \(wouldClip) samples do")
        let peak = left.map { abs(Int($0)) }.max()!
        #expect(peak <= Int(VoiceMixer.limiterCeiling * 32767), "peak \(peak) passed the limiter's ceiling")
        // The shape survives: the limited mix still follows the sine.
        let wanted = loud.map(Double.init), got = left.map(Double.init)
        let c = TestAudio.correlation(wanted, got, lag: 0)
        print("limiter: peak \(peak), correlation with the unlimited sum \(String(format: "%.3f", c))")
        #expect(c > 0.95)
    }

    @Test func aQuietMixPassesUnchanged() throws {
        let mixer = VoiceMixer()
        let quiet = Self.sine(frequency: 440, amplitude: 0.3)
        let (left, right) = Self.channels(try mixer.mix(["a": quiet]))
        for i in 0..<960 {
            #expect(abs(Double(left[i]) - Double(quiet[i]) * 0.7071) <= 2)
            #expect(left[i] == right[i])
        }
    }

    @Test func aMutedStreamIsAbsent() throws {
        var mixer = VoiceMixer()
        var muted = VoiceMixer.StreamSettings()
        muted.muted = true
        try mixer.set(muted, for: "troll")
        let voice = Self.sine(frequency: 200, amplitude: 0.3)
        let noise = Self.sine(frequency: 3_000, amplitude: 0.5)
        let alone = try mixer.mix(["friend": voice])
        let together = try mixer.mix(["friend": voice, "troll": noise])
        #expect(alone == together)
        let onlyTroll = try mixer.mix(["troll": noise])
        #expect(onlyTroll.allSatisfy { $0 == 0 })
    }

    @Test func gainAndPanPlaceAStream() throws {
        var mixer = VoiceMixer()
        var left = VoiceMixer.StreamSettings()
        left.pan = -1
        left.gain = 0.5
        try mixer.set(left, for: "a")
        try mixer.setChannelVolume(0.5)
        let (l, r) = Self.channels(try mixer.mix(["a": Self.sine(frequency: 500, amplitude: 0.8)]))
        #expect(r.allSatisfy { abs($0) <= 1 })
        #expect(abs(Self.rms(l) - 0.8 * 0.25 * 32767 / 2.0.squareRoot()) < 50)
        var tooLoud = VoiceMixer.StreamSettings()
        tooLoud.gain = 9
        #expect(throws: VoiceError.self) { try mixer.set(tooLoud, for: "a") }
        #expect(throws: VoiceError.self) { try mixer.mix(["a": [1, 2, 3]]) }
    }

    @Test func aFarSourceIsQuieter() throws {
        for model in [PositionalAudio.DistanceModel.inverse, .linear, .exponential] {
            let space = try PositionalAudio(model: model, referenceDistance: 2, maxDistance: 50, rolloff: 1)
            let near = space.placement(of: SIMD3(0, 0, -1)), far = space.placement(of: SIMD3(0, 0, -40))
            print("\(model): gain at 1 m \(near.gain), at 40 m \(far.gain)")
            #expect(near.gain == 1, "inside the reference distance the gain is 1")
            #expect(far.gain < near.gain / 2)
        }
        // OpenAL's formulas at 10 m with reference 2, max 50, rolloff 1.
        #expect(abs(try PositionalAudio(model: .inverse, referenceDistance: 2, maxDistance: 50).gain(atDistance: 10) - 0.2) < 1e-6)
        #expect(abs(try PositionalAudio(model: .linear, referenceDistance: 2, maxDistance: 50).gain(atDistance: 10) - (1 - 8.0 / 48)) < 1e-6)
        #expect(abs(try PositionalAudio(model: .exponential, referenceDistance: 2, maxDistance: 50).gain(atDistance: 10) - 0.2) < 1e-6)
        #expect(try PositionalAudio(model: .linear, referenceDistance: 2, maxDistance: 50).gain(atDistance: 500) == 0)
    }

    @Test func aSourceOnTheLeftIsLouderOnTheLeft() throws {
        var space = try PositionalAudio()
        let voice = Self.sine(frequency: 300, amplitude: 0.5)
        func render(_ position: SIMD3<Float>) throws -> (left: Double, right: Double) {
            let placement = space.placement(of: position)
            var mixer = VoiceMixer()
            var settings = VoiceMixer.StreamSettings()
            settings.gain = placement.gain
            settings.pan = placement.pan
            try mixer.set(settings, for: "a")
            let (l, r) = Self.channels(try mixer.mix(["a": voice]))
            return (Self.rms(l), Self.rms(r))
        }
        let left = try render(SIMD3(-3, 0, -1))
        #expect(left.left > 2 * left.right, "\(left)")
        let ahead = try render(SIMD3(0, 0, -3))
        #expect(abs(ahead.left - ahead.right) < 1)
        // A source straight behind is centred; once the listener turns to face +X, +Z is on its right.
        let behind = try render(SIMD3(0, 0, 3))
        #expect(abs(behind.left - behind.right) < 1)
        try space.orientListener(forward: SIMD3(1, 0, 0), up: SIMD3(0, 1, 0))
        let turned = try render(SIMD3(0, 0, 3))
        #expect(turned.right > 2 * turned.left, "\(turned)")
        #expect(throws: VoiceError.self) { try space.orientListener(forward: SIMD3(0, 1, 0), up: SIMD3(0, 2, 0)) }
    }
}
