import Foundation
import Testing
@testable import GameCenterServer

/// Many tasks formatting at once, with caches filling concurrently, give the same strings as one thread.
@Suite("Concurrent use")
struct ConcurrencyTests {
    @Test("Parallel formatting matches serial formatting")
    func parallel() async {
        let locales = ["en", "de", "fr", "ja", "de-AT", "pt_BR", "pt-PT", "ru", "ar-EG", "sv", "garbage", "", "zh-TW", "es"]
        let values = spreadValues(count: 40, below: .max, seed: 99) + [.min, .max]
        let serial = ScoreFormatter()
        var expected: [String] = []
        for locale in locales {
            for format in ScoreFormat.allCases {
                for value in values {
                    expected.append(serial.format(value, format: format, currency: "EUR", suffix: PluralSuffix(one: "a", few: "b", other: "c"), locale: locale))
                }
            }
        }
        let shared = ScoreFormatter()
        let results = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var output: [String] = []
                    for locale in locales {
                        for format in ScoreFormat.allCases {
                            for value in values {
                                output.append(
                                    shared.format(value, format: format, currency: "EUR", suffix: PluralSuffix(one: "a", few: "b", other: "c"), locale: locale))
                            }
                        }
                    }
                    return output
                }
            }
            var all: [[String]] = []
            for await output in group { all.append(output) }
            return all
        }
        #expect(results.count == 8)
        for output in results {
            #expect(output == expected)
        }
    }
}
