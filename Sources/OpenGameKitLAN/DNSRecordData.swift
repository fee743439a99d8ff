/// The typed data (RDATA) of a DNS resource record.
public enum DNSRecordData: Hashable, Sendable, CustomStringConvertible {
    /// An IPv4 address (`A`).
    case a(IPv4Address)
    /// An IPv6 address (`AAAA`).
    case aaaa(IPv6Address)
    /// A pointer to another name (`PTR`); DNS-SD uses it to list service instances.
    case ptr(DNSName)
    /// A service location (`SRV`, RFC 2782).
    case srv(priority: UInt16, weight: UInt16, port: UInt16, target: DNSName)
    /// Text strings (`TXT`).
    case txt(TXTRecord)
    /// A next-secure record (`NSEC`) listing the types that exist for the owner name (RFC 6762 §6.1).
    case nsec(nextName: DNSName, types: [DNSRecordType])
    /// Any other type, kept as raw bytes. Names inside such data are not decompressed.
    case unknown(type: DNSRecordType, data: [UInt8])

    /// The record type this data belongs to.
    public var type: DNSRecordType {
        switch self {
        case .a: .a
        case .aaaa: .aaaa
        case .ptr: .ptr
        case .srv: .srv
        case .txt: .txt
        case .nsec: .nsec
        case .unknown(let type, _): type
        }
    }

    /// The data's wire encoding without name compression (used for comparisons such as the probe tie-break).
    public func canonicalBytes() throws(DNSMessageError) -> [UInt8] {
        var encoder = DNSMessageEncoder(compress: false)
        try encoder.writeRecordData(self)
        return encoder.bytes
    }

    /// A short human-readable rendering.
    public var description: String {
        switch self {
        case .a(let address): "A \(address)"
        case .aaaa(let address): "AAAA \(address)"
        case .ptr(let name): "PTR \(name)"
        case .srv(let priority, let weight, let port, let target): "SRV \(priority) \(weight) \(port) \(target)"
        case .txt(let txt): "TXT \(txt)"
        case .nsec(let next, let types): "NSEC \(next) \(types.map(\.description).joined(separator: " "))"
        case .unknown(let type, let data): "\(type) (\(data.count) bytes)"
        }
    }
}
