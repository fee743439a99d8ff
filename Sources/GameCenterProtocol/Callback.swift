/// A closure to keep in a `Mutex`: wrapped in a struct, it is stored once and read as it is. Read it out whole
/// (`mutex.withLock { $0 }`) and call ``call`` outside the lock.
///
/// A closure kept directly as a `Mutex`'s value (or in an optional or a tuple there) is converted to the generic
/// representation and back each time `withLock` hands it out `inout`, and each round trip wraps it in two more thunks
/// that stay: the SQL statement timer's observer grew by two thunks per statement until calling it took a third of the
/// server's CPU (`gamecenter-bench reports`), and the relay's datagram sender grew the same way with every batch. A
/// struct is not converted.
public struct Callback<Argument>: Sendable {
    /// The closure.
    public let call: @Sendable (Argument) -> Void

    /// Wraps `call`.
    public init(_ call: @escaping @Sendable (Argument) -> Void) {
        self.call = call
    }
}
