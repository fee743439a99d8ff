extension Duration {
    /// The duration in whole nanoseconds (what metrics' timers and atomic timestamps take).
    package var inNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
