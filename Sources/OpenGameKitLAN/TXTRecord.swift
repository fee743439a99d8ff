/// The data of a DNS TXT record: a list of byte strings, read as DNS-SD key/value pairs (RFC 6763 §6).
///
/// Each string is `key=value`, or a bare `key` for a boolean attribute. ``dictionary`` applies the
/// RFC 6763 §6.4 rules: the key is everything before the first `=`, keys are case-insensitive (they
/// are returned lower-cased), the first occurrence of a key wins, a bare key maps to `nil`, `key=` maps
/// to the empty string, and strings that start with `=` or are empty are ignored.
public struct TXTRecord: Hashable, Sendable, CustomStringConvertible {
    /// The raw character strings, each at most 255 bytes, in wire order.
    public var strings: [[UInt8]]

    /// Creates a TXT record from raw strings.
    public init(strings: [[UInt8]]) {
        self.strings = strings
    }

    /// Creates a TXT record from key/value pairs, sorted by key for a stable encoding.
    /// A `nil` value produces a bare boolean key.
    public init(_ dictionary: [String: String?]) {
        self.strings = dictionary.keys.sorted().map { key in
            switch dictionary[key] {
            case .some(.some(let value)): Array("\(key)=\(value)".utf8)
            default: Array(key.utf8)
            }
        }
    }

    /// The key/value pairs per RFC 6763 §6.4 (keys lower-cased; values decoded as UTF-8, invalid bytes replaced).
    public var dictionary: [String: String?] {
        var result: [String: String?] = [:]
        for string in strings {
            guard let first = string.first, first != UInt8(ascii: "=") else { continue }
            let keyBytes: ArraySlice<UInt8>
            let value: String?
            if let equals = string.firstIndex(of: UInt8(ascii: "=")) {
                keyBytes = string[..<equals]
                value = String(decoding: string[(equals + 1)...], as: UTF8.self)
            } else {
                keyBytes = string[...]
                value = nil
            }
            let key = String(decoding: keyBytes.map(DNSName.asciiLower), as: UTF8.self)
            if result.index(forKey: key) == nil {
                result[key] = .some(value)
            }
        }
        return result
    }

    /// The value for `key` (case-insensitive): `nil` if absent, `.some(nil)` for a bare boolean key.
    public subscript(key: String) -> String?? {
        dictionary[String(decoding: key.utf8.map(DNSName.asciiLower), as: UTF8.self)]
    }

    /// The strings joined by spaces, for logging.
    public var description: String {
        strings.map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
    }
}
