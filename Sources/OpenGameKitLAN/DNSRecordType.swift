/// A DNS resource record type (RRTYPE), open to values this module does not interpret.
public struct DNSRecordType: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 16-bit type code.
    public var rawValue: UInt16

    /// Creates a type from its 16-bit code.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// IPv4 host address (1).
    public static let a = DNSRecordType(rawValue: 1)
    /// Domain name pointer (12), used by DNS-SD to list service instances.
    public static let ptr = DNSRecordType(rawValue: 12)
    /// Text strings (16), used by DNS-SD for key/value metadata.
    public static let txt = DNSRecordType(rawValue: 16)
    /// IPv6 host address (28).
    public static let aaaa = DNSRecordType(rawValue: 28)
    /// Service location (33): priority, weight, port and target host.
    public static let srv = DNSRecordType(rawValue: 33)
    /// Next secure record (47), used by mDNS to assert which types exist for a name.
    public static let nsec = DNSRecordType(rawValue: 47)
    /// The query-only "any type" value (255).
    public static let any = DNSRecordType(rawValue: 255)

    /// A mnemonic such as `SRV`, or `TYPE123` for types without one.
    public var description: String {
        switch self {
        case .a: "A"
        case .ptr: "PTR"
        case .txt: "TXT"
        case .aaaa: "AAAA"
        case .srv: "SRV"
        case .nsec: "NSEC"
        case .any: "ANY"
        default: "TYPE\(rawValue)"
        }
    }

    /// Orders types by their numeric code.
    public static func < (lhs: DNSRecordType, rhs: DNSRecordType) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
