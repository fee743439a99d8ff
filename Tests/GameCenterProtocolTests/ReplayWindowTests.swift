import GameCenterProtocol
import NetworkFaultProxy
import Testing

/// The window's meaning written the obvious way: a set of every accepted counter.
private struct ReferenceWindow {
    var highest: UInt64 = 0
    var seen: Set<UInt64> = []

    mutating func accept(_ counter: UInt64) -> Bool {
        guard counter != 0 else { return false }
        if counter > highest {
            highest = counter
        } else if highest - counter > 1023 {
            return false
        }
        return seen.insert(counter).inserted
    }
}

/// Feeds each counter in turn and checks the window's answer (#expect cannot call a mutating method itself).
private func expectAnswers(
    _ window: inout ReplayWindow,
    _ answers: [(counter: UInt64, accepted: Bool)],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    for (counter, expected) in answers {
        let accepted = window.accept(counter)
        #expect(accepted == expected, "counter \(counter)", sourceLocation: sourceLocation)
    }
}

@Suite struct ReplayWindowTests {
    @Test func acceptsInOrder() {
        var window = ReplayWindow()
        #expect(window.highest == 0)
        expectAnswers(&window, (UInt64(1)...5000).map { ($0, true) })
        #expect(window.highest == 5000)
    }

    @Test func acceptsReorderedOnce() {
        var window = ReplayWindow()
        expectAnswers(&window, [(1024, true)])
        expectAnswers(&window, (UInt64(1)..<1024).reversed().map { ($0, true) })
        expectAnswers(&window, (UInt64(1)...1024).map { ($0, false) })
        #expect(window.highest == 1024)
    }

    @Test func rejectsDuplicates() {
        var window = ReplayWindow()
        expectAnswers(&window, [(7, true), (7, false), (9, true), (9, false), (7, false), (8, true), (8, false)])
    }

    @Test func rejectsTooOld() {
        var window = ReplayWindow()
        expectAnswers(&window, [(2000, true), (2000 - 1024, false), (1, false), (2000 - 1023, true), (2000 - 1023, false)])
    }

    @Test func neverAcceptsZero() {
        var window = ReplayWindow()
        expectAnswers(&window, [(0, false), (1, true), (0, false)])
        #expect(window.highest == 1)
    }

    /// Fills the window with 1…1024, jumps ahead, then checks every counter up to the new highest.
    @Test(arguments: [1, 63, 64, 65, 1023, 1024, 1025, 5000] as [UInt64])
    func jumpsForgetExactlyWhatLeftTheWindow(_ jump: UInt64) {
        var window = ReplayWindow()
        expectAnswers(&window, (UInt64(1)...1024).map { ($0, true) })
        let top = 1024 + jump
        expectAnswers(&window, [(top, true)])
        #expect(window.highest == top)
        expectAnswers(
            &window,
            (UInt64(1)...top).map { counter in
                (counter, counter > 1024 && counter < top && top - counter <= 1023)
            })
        expectAnswers(&window, (UInt64(1)...top).map { ($0, false) })
    }

    @Test func handlesTheLargestCounter() {
        var window = ReplayWindow()
        expectAnswers(&window, [(.max, true), (.max, false)])
        #expect(window.highest == .max)
        expectAnswers(
            &window,
            [
                (.max - 1023, true), (.max - 1024, false), (.max - 1, true), (.max - 1, false), (1, false), (0, false),
            ])
    }

    @Test func matchesTheReferenceOnRandomTraffic() {
        let seed = TestSeed(default: 0x5EED)
        var generator = SeededGenerator(seed: seed.value)
        var window = ReplayWindow()
        var reference = ReferenceWindow()
        var mismatches = 0
        for _ in 0..<200_000 {
            let counter: UInt64
            switch UInt8.random(in: 0..<100, using: &generator) {
            case 0:
                counter = reference.highest + UInt64.random(in: 1...3000, using: &generator)
            case 1..<60:
                counter = reference.highest + UInt64.random(in: 0...3, using: &generator)
            default:
                let back = UInt64.random(in: 0...1100, using: &generator)
                counter = reference.highest >= back ? reference.highest - back : back
            }
            if window.accept(counter) != reference.accept(counter) {
                mismatches += 1
            }
            if window.highest != reference.highest {
                mismatches += 1
            }
        }
        #expect(mismatches == 0, "\(seed)")
    }
}
