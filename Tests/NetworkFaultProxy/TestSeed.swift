import Foundation

/// The seed of a randomized test: the test's fixed default, or `OPENGAMEKIT_FUZZ_SEED` when that is set (decimal or
/// `0x` hexadecimal), so a failure replays exactly and other inputs can be tried without editing the test.
///
/// Its description names the seed and how to replay it; every randomized test puts it in its failure messages.
public struct TestSeed: Sendable, CustomStringConvertible {
    /// The environment variable that replaces every randomized test's default seed.
    public static let environmentVariable = "OPENGAMEKIT_FUZZ_SEED"

    /// The seed in use.
    public let value: UInt64

    /// `OPENGAMEKIT_FUZZ_SEED` when it is set, `value` otherwise; traps when the variable holds no UInt64.
    public init(default value: UInt64) {
        self.init(default: value, environment: ProcessInfo.processInfo.environment[Self.environmentVariable])
    }

    /// `environment` (the variable's text) when it is not nil, `value` otherwise.
    init(default value: UInt64, environment: String?) {
        guard let text = environment?.trimmingCharacters(in: .whitespaces) else {
            self.value = value
            return
        }
        let parsed = text.lowercased().hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
        guard let parsed else { preconditionFailure("\(Self.environmentVariable)=\(text) is not a UInt64 (decimal or 0x hexadecimal)") }
        self.value = parsed
    }

    /// A generator that draws the seed's sequence.
    public var generator: SplitMix64 { SplitMix64(seed: value) }

    /// For example "seed 0x5EED (replay: OPENGAMEKIT_FUZZ_SEED=0x5EED)".
    public var description: String {
        let hex = "0x" + String(value, radix: 16, uppercase: true)
        return "seed \(hex) (replay: \(Self.environmentVariable)=\(hex))"
    }
}
