/// Anti-replay window over datagram counters (RFC 4303 §3.4.3 style), 1024 counters wide.
///
/// Keep one per connection and direction. A fixed 1024-bit bitmap indexed by `counter % 1024` records which
/// counters in the window were seen; `accept` never allocates. The window is exact: every counter from
/// `highest − 1023` to `highest` is remembered, none is forgotten early.
public struct ReplayWindow: Sendable {
    private static let width: UInt64 = 1024

    private typealias Bitmap = (
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
    )

    /// Bit `c % 1024` is set when counter `c`, within the window, was accepted.
    private var bitmap: Bitmap = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// The largest counter accepted so far; 0 before the first.
    public private(set) var highest: UInt64 = 0

    /// Creates an empty window that has accepted nothing.
    public init() {}

    /// True exactly once per counter that is new and not older than (highest − 1023); counter 0 is never accepted.
    ///
    /// Call only after the datagram authenticated: otherwise a forged counter would move the window and make
    /// genuine datagrams look old.
    public mutating func accept(_ counter: UInt64) -> Bool {
        guard counter != 0 else { return false }
        if counter > highest {
            let passedFrom = highest + 1
            let advance = counter - highest
            withWords { words in
                if advance >= Self.width {
                    words.update(repeating: 0)
                } else {
                    // The slots of the counters passed over still hold counters from a lap ago.
                    Self.clear(slotsFrom: passedFrom, count: Int(advance), in: words)
                }
                Self.set(counter, in: words)
            }
            highest = counter
            return true
        }
        guard highest - counter < Self.width else { return false }
        return withWords { words in
            guard !Self.isSet(counter, in: words) else { return false }
            Self.set(counter, in: words)
            return true
        }
    }

    private mutating func withWords<Result>(_ body: (UnsafeMutableBufferPointer<UInt64>) -> Result) -> Result {
        withUnsafeMutablePointer(to: &bitmap) { tuple in
            tuple.withMemoryRebound(to: UInt64.self, capacity: 16) { first in
                body(UnsafeMutableBufferPointer(start: first, count: 16))
            }
        }
    }

    private static func isSet(_ counter: UInt64, in words: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        let slot = Int(counter % width)
        return words[slot >> 6] & (1 << UInt64(slot & 63)) != 0
    }

    private static func set(_ counter: UInt64, in words: UnsafeMutableBufferPointer<UInt64>) {
        let slot = Int(counter % width)
        words[slot >> 6] |= 1 << UInt64(slot & 63)
    }

    /// Clears `count` (< 1024) consecutive slots starting at `first`'s, a partial word at a time.
    private static func clear(slotsFrom first: UInt64, count: Int, in words: UnsafeMutableBufferPointer<UInt64>) {
        var slot = Int(first % width)
        var remaining = count
        while remaining > 0 {
            let bit = slot & 63
            let run = min(remaining, 64 - bit)
            let mask: UInt64 = run == 64 ? ~0 : ((1 << UInt64(run)) - 1) << UInt64(bit)
            words[slot >> 6] &= ~mask
            remaining -= run
            slot = (slot + run) % Int(width)
        }
    }
}
