/// An instruction from a ``Responder`` to the code that owns the socket and the clock.
public enum ResponderAction: Hashable, Sendable {
    /// Send `message` to `destination` at `time` (which may be now or a little later for shared answers).
    case send(DNSMessage, to: MDNSDestination, at: ContinuousClock.Instant)
    /// Report an event.
    case event(ResponderEvent)
}
