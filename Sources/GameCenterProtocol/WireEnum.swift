/// A string-valued enum on the wire whose decoding failure names what is allowed.
///
/// The synthesized decoding says "Cannot initialize LeaderboardPlayerScope from invalid String value everyone";
/// this one says "'everyone' is not one of: global, friendsOnly", which the server passes on to the client.
public protocol WireEnum: RawRepresentable, CaseIterable, Codable where RawValue == String {}

extension WireEnum {
    /// Decodes a raw value, or throws `dataCorrupted` listing the allowed values.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let value = Self(rawValue: raw) else {
            let allowed = Self.allCases.map(\.rawValue).joined(separator: ", ")
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(raw)' is not one of: \(allowed)")
        }
        self = value
    }
}
