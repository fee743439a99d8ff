/// A DNS domain name as a list of labels, e.g. `["My Game", "_mygame", "_tcp", "local"]`.
///
/// Labels are stored as Swift strings (decoded as UTF-8, RFC 6762 §16) and may contain any character,
/// including dots and spaces. Comparison and hashing are case-insensitive for ASCII letters only, as
/// DNS requires. The textual form escapes `.` and `\` inside labels with a backslash and always ends
/// with a dot (`My\.Game._mygame._tcp.local.`).
public struct DNSName: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// Maximum length of one label in bytes (RFC 1035 §2.3.4).
    public static let maxLabelLength = 63
    /// Maximum length of an encoded name in bytes, including length bytes and the final zero byte.
    public static let maxEncodedLength = 255

    /// The labels, most specific first. The root name has no labels.
    public var labels: [String]

    /// Creates a name from its labels, most specific first.
    public init(labels: [String]) {
        self.labels = labels
    }

    /// Parses a dotted name. A trailing dot is optional; `\.` and `\\` escape a dot or backslash inside a label.
    /// Empty labels (as in `a..b`) are dropped.
    public init(_ string: String) {
        var labels: [String] = []
        var current = ""
        var escaping = false
        for character in string {
            if escaping {
                current.append(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "." {
                if !current.isEmpty { labels.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { labels.append(current) }
        self.labels = labels
    }

    /// Parses a dotted name from a string literal; see ``init(_:)``.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The root name (no labels).
    public static let root = DNSName(labels: [])

    /// The `local.` domain used by Multicast DNS.
    public static let local = DNSName(labels: ["local"])

    /// The dotted textual form with escaped dots and backslashes and a trailing dot.
    public var description: String {
        if labels.isEmpty { return "." }
        var result = ""
        for label in labels {
            for character in label {
                if character == "." || character == "\\" { result.append("\\") }
                result.append(character)
            }
            result.append(".")
        }
        return result
    }

    /// The number of bytes this name takes on the wire without compression.
    public var encodedLength: Int {
        labels.reduce(1) { $0 + 1 + $1.utf8.count }
    }

    /// Throws ``DNSMessageError/invalidName(_:)`` unless every label is 1–63 bytes and the name fits in 255 bytes.
    public func validate() throws(DNSMessageError) {
        for label in labels where label.utf8.isEmpty || label.utf8.count > Self.maxLabelLength {
            throw .invalidName("label of \(label.utf8.count) bytes in \(description); labels must be 1–63 bytes")
        }
        guard encodedLength <= Self.maxEncodedLength else {
            throw .invalidName("\(description) is \(encodedLength) bytes; names must fit in 255 bytes")
        }
    }

    /// The name with `label` added in front, e.g. `"host"` + `local.` → `host.local.`.
    public func prepending(_ label: String) -> DNSName {
        DNSName(labels: [label] + labels)
    }

    /// The name without its first label; the root name stays the root name.
    public var parent: DNSName {
        DNSName(labels: Array(labels.dropFirst()))
    }

    /// The first label, or `nil` for the root name.
    public var firstLabel: String? { labels.first }

    /// Whether `self` equals `suffix` or ends with all of its labels (case-insensitively).
    public func hasSuffix(_ suffix: DNSName) -> Bool {
        guard suffix.labels.count <= labels.count else { return false }
        let offset = labels.count - suffix.labels.count
        for (index, label) in suffix.labels.enumerated()
        where !DNSName.labelsEqual(labels[offset + index], label) {
            return false
        }
        return true
    }

    /// Case-insensitive (ASCII only) label equality, as DNS requires.
    public static func labelsEqual(_ lhs: String, _ rhs: String) -> Bool {
        let a = lhs.utf8, b = rhs.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { asciiLower($0) == asciiLower($1) }
    }

    /// Equality ignores ASCII case.
    public static func == (lhs: DNSName, rhs: DNSName) -> Bool {
        lhs.labels.count == rhs.labels.count && zip(lhs.labels, rhs.labels).allSatisfy { labelsEqual($0, $1) }
    }

    /// Hashes the ASCII-lower-cased labels so that equal names hash equally.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(labels.count)
        for label in labels {
            for byte in label.utf8 { hasher.combine(DNSName.asciiLower(byte)) }
            hasher.combine(0xFF as UInt8)
        }
    }

    static func asciiLower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}
