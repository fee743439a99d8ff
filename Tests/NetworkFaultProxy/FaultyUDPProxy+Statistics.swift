extension FaultyUDPProxy {
    /// Counters of a `FaultyUDPProxy`, both directions together.
    ///
    /// Each datagram the proxy reads counts once, in `forwarded` or `dropped`. `duplicated` counts the extra
    /// copies sent (a duplicated datagram is one `forwarded` and one `duplicated`); `reordered` counts held-back
    /// datagrams that were sent after a later one (those released by the hold timeout are not counted).
    public struct Statistics: Sendable, Equatable {
        /// Datagrams passed on (at least once).
        public var forwarded: Int
        /// Datagrams dropped by loss or blocking.
        public var dropped: Int
        /// Datagrams sent after the one that followed them.
        public var reordered: Int
        /// Extra copies sent.
        public var duplicated: Int

        /// Creates a set of counters; all default to zero.
        public init(forwarded: Int = 0, dropped: Int = 0, reordered: Int = 0, duplicated: Int = 0) {
            self.forwarded = forwarded
            self.dropped = dropped
            self.reordered = reordered
            self.duplicated = duplicated
        }
    }
}
