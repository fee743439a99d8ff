/// A DNS resource record as carried in the answer, authority and additional sections.
public struct DNSResourceRecord: Hashable, Sendable, CustomStringConvertible {
    /// The class `IN` (Internet), the only class mDNS uses.
    public static let classIN: UInt16 = 1

    /// The owner name.
    public var name: DNSName
    /// The record's class without the cache-flush bit (normally ``classIN``).
    public var recordClass: UInt16
    /// The mDNS cache-flush bit (RFC 6762 §10.2): the top bit of the class field. Set on unique records.
    public var cacheFlush: Bool
    /// Time to live in seconds. In mDNS a TTL of 0 is a goodbye (RFC 6762 §10.1).
    public var ttl: UInt32
    /// The typed record data.
    public var data: DNSRecordData

    /// Creates a record.
    public init(name: DNSName, data: DNSRecordData, ttl: UInt32, cacheFlush: Bool = false, recordClass: UInt16 = DNSResourceRecord.classIN) {
        self.name = name
        self.data = data
        self.ttl = ttl
        self.cacheFlush = cacheFlush
        self.recordClass = recordClass
    }

    /// The record type, derived from ``data``.
    public var type: DNSRecordType { data.type }

    /// Whether `other` has the same name, type, class and data (ignoring TTL and cache-flush bit).
    public func isSameRecord(as other: DNSResourceRecord) -> Bool {
        name == other.name && recordClass == other.recordClass && data == other.data
    }

    /// A one-line rendering such as `host.local. 120 A 10.0.0.1`.
    public var description: String {
        "\(name) \(ttl)\(cacheFlush ? " flush" : "") \(data)"
    }
}
