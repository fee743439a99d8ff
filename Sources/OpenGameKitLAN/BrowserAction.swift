/// An instruction from a ``Browser`` to the code that owns the socket and the clock.
public enum BrowserAction: Hashable, Sendable {
    /// Multicast `message` to 224.0.0.251:5353 at `time`.
    case send(DNSMessage, at: ContinuousClock.Instant)
    /// Report an event.
    case event(BrowserEvent)
}
