/// An IPv4 or IPv6 address, as carried by DNS `A` and `AAAA` records.
public enum IPAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// An IPv4 address (from an `A` record).
    case v4(IPv4Address)
    /// An IPv6 address (from an `AAAA` record).
    case v6(IPv6Address)

    /// The textual form of the address.
    public var description: String {
        switch self {
        case .v4(let address): address.description
        case .v6(let address): address.description
        }
    }

    /// Orders IPv4 before IPv6, then numerically.
    public static func < (lhs: IPAddress, rhs: IPAddress) -> Bool {
        switch (lhs, rhs) {
        case (.v4(let a), .v4(let b)): a < b
        case (.v6(let a), .v6(let b)): a < b
        case (.v4, .v6): true
        case (.v6, .v4): false
        }
    }
}
