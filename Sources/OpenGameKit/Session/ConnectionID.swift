/// Names one TCP connection of a session; allocated by ``SessionCore``.
struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number, unique within one session.
    let rawValue: Int

    /// Orders by number.
    static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `#n`.
    var description: String { "#\(rawValue)" }
}
