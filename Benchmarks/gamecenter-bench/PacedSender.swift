import Foundation

/// Sends at a steady rate from a thread of its own: each of `senders` sends `hertz` times a second, their turns
/// spread over 1 ms ticks, for `seconds`; returns what was sent, what the sends refused, and the thread's CPU time.
enum PacedSender {
    /// What one run did.
    struct Figures {
        /// Sends that went out.
        var sent: Int
        /// Sends that threw (the SDK's rate limit, a disconnected match).
        var refused: Int
        /// Seconds from the first send to the end.
        var elapsed: Double
        /// CPU seconds of the sending thread.
        var cpu: Double
    }

    /// Runs `send(index)` for every turn; a throwing send counts as refused.
    static func run(senders: Int, hertz: Double, seconds: Double, send: @escaping @Sendable (Int) throws -> Void) async -> Figures {
        await withCheckedContinuation { continuation in
            Thread {
                Thread.current.name = "voice bench send"
                let ticks = max(1, Int((1000 / hertz).rounded()))
                var sent = 0, refused = 0, phase = 0
                let cpuStart = ThreadClock.seconds()
                let start = ContinuousClock.now
                let end = start + .milliseconds(Int(seconds * 1000))
                var next = start
                while next < end {
                    for index in stride(from: phase, to: senders, by: ticks) {
                        do {
                            try send(index)
                            sent += 1
                        } catch {
                            refused += 1
                        }
                    }
                    phase = (phase + 1) % ticks
                    next += .milliseconds(1)
                    let wait = next - ContinuousClock.now
                    if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18) }
                }
                continuation.resume(returning: Figures(sent: sent, refused: refused, elapsed: secondsSince(start), cpu: ThreadClock.seconds() - cpuStart))
            }.start()
        }
    }
}
