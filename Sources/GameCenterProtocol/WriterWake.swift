/// Wakes a task that writes queued frames (a relay connection's writer, on the server and on devices).
///
/// A class around `AsyncStream<Void>.Continuation` rather than the continuation itself: that type is resilient (its
/// size is known only at run time), so a struct holding one is laid out and copied through runtime witnesses — on
/// every datagram, for the relay state that holds a wake per connection.
public final class WriterWake: Sendable {
    private let continuation: AsyncStream<Void>.Continuation

    /// Wakes through `continuation` (a stream that buffers the newest element, so wake-ups coalesce).
    public init(_ continuation: AsyncStream<Void>.Continuation) {
        self.continuation = continuation
    }

    /// Wakes the writer (a wake-up already pending absorbs this one).
    public func yield() {
        continuation.yield()
    }

    /// Ends the writer's stream: it wakes no more.
    public func finish() {
        continuation.finish()
    }
}
