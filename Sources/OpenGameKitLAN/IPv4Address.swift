/// An IPv4 address as four raw bytes in network order, independent of any socket library.
public struct IPv4Address: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The four address bytes, most significant first.
    public var bytes: (UInt8, UInt8, UInt8, UInt8)

    /// Creates an address from its four bytes, most significant first.
    public init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        self.bytes = (a, b, c, d)
    }

    /// Parses dotted-quad notation such as `"192.168.1.10"`; returns `nil` for anything else.
    public init?(_ string: String) {
        let parts = string.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var values: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = UInt8(part)
            else { return nil }
            values.append(value)
        }
        self.init(values[0], values[1], values[2], values[3])
    }

    /// The address bytes as an array, most significant first.
    public var byteArray: [UInt8] { [bytes.0, bytes.1, bytes.2, bytes.3] }

    /// Dotted-quad notation, e.g. `192.168.1.10`.
    public var description: String { "\(bytes.0).\(bytes.1).\(bytes.2).\(bytes.3)" }

    /// Whether this is a loopback address (127.0.0.0/8).
    public var isLoopback: Bool { bytes.0 == 127 }

    /// Equality compares all four bytes.
    public static func == (lhs: IPv4Address, rhs: IPv4Address) -> Bool {
        lhs.byteArray == rhs.byteArray
    }

    /// Hashes all four bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.0); hasher.combine(bytes.1); hasher.combine(bytes.2); hasher.combine(bytes.3)
    }

    /// Orders addresses numerically.
    public static func < (lhs: IPv4Address, rhs: IPv4Address) -> Bool {
        lhs.byteArray.lexicographicallyPrecedes(rhs.byteArray)
    }
}
