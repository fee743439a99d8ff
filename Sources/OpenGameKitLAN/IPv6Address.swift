/// An IPv6 address as sixteen raw bytes in network order, independent of any socket library.
public struct IPv6Address: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The sixteen address bytes, most significant first.
    public let bytes: [UInt8]

    /// Creates an address from exactly sixteen bytes; returns `nil` for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Lower-case hexadecimal groups separated by colons (no zero compression), e.g. `fe80:0:0:0:0:0:0:1`.
    public var description: String {
        stride(from: 0, to: 16, by: 2).map { index in
            String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16)
        }.joined(separator: ":")
    }

    /// Orders addresses numerically.
    public static func < (lhs: IPv6Address, rhs: IPv6Address) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}
