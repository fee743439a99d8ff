import Foundation

/// Runs a voice engine's 20 ms tick on a thread of its own.
enum VoiceFrameClock {
    /// Starts a thread named `name` that calls `tick` every 20 ms while `running` says so; a stalled machine skips
    /// the missed frames rather than rushing through them.
    static func start(name: String, running: @escaping @Sendable () -> Bool, tick: @escaping @Sendable () -> Void) {
        let thread = Thread {
            // Named from inside: on Linux, Foundation keeps a name set before `start()` on the `Thread` object only, and
            // the system (`/proc/…/comm`, `top -H`, the benches' CPU per thread) saw none.
            Thread.current.name = name
            let frame = Duration.milliseconds(VoiceFormat.frameMilliseconds)
            var next = ContinuousClock.now
            while running() {
                tick()
                next += frame
                let now = ContinuousClock.now
                if next > now {
                    let wait = next - now
                    Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
                } else if now - next > frame * 5 {
                    next = now
                }
            }
        }
        thread.start()
    }
}
