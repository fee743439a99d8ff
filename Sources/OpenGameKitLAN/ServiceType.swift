/// A DNS-SD service type for one game, `_<name>._tcp.local.` (RFC 6763 §7).
///
/// The name is a game's session id and must be a valid RFC 6335 §5.1 service name:
/// 1–15 characters, only ASCII letters, digits and hyphens, at least one letter,
/// no hyphen at the start or end, and no two hyphens in a row. Service names are
/// case-insensitive; this type keeps the spelling it was given.
public struct ServiceType: Hashable, Sendable, CustomStringConvertible {
    /// The service name without the leading underscore, e.g. `mygame`.
    public let name: String

    /// Creates the service type `_<sessionID>._tcp.local.`, or throws ``ServiceTypeError`` saying which rule was broken.
    public init(sessionID: String) throws(ServiceTypeError) {
        try Self.validate(sessionID)
        self.name = sessionID
    }

    /// The full DNS name, `_<name>._tcp.local.`.
    public var domainName: DNSName {
        DNSName(labels: ["_\(name)", "_tcp", "local"])
    }

    /// The textual DNS name, e.g. `_mygame._tcp.local.`.
    public var description: String { domainName.description }

    /// Checks `name` against the RFC 6335 §5.1 rules and throws a ``ServiceTypeError`` explaining the first violation.
    public static func validate(_ name: String) throws(ServiceTypeError) {
        let characters = Array(name.unicodeScalars)
        guard !characters.isEmpty else { throw .empty }
        guard characters.count <= 15 else { throw .tooLong(name) }
        if let bad = characters.first(where: { !isAllowed($0) }) {
            throw .invalidCharacter(name, bad)
        }
        guard characters.contains(where: isLetter) else { throw .noLetter(name) }
        guard characters.first != "-", characters.last != "-" else { throw .hyphenAtEnd(name) }
        guard !name.contains("--") else { throw .consecutiveHyphens(name) }
    }

    /// Derives a service type from an app's bundle identifier when the game gives no session id: readable, and
    /// different for every bundle id (`com.a.tapper` and `com.b.tapper` never meet on the network).
    ///
    /// The rule, applied in order:
    /// 1. take the last dot-separated component of the bundle id (`com.example.Space-Race` → `Space-Race`);
    /// 2. lower-case it (ASCII);
    /// 3. drop every character that is not an ASCII letter, digit or hyphen;
    /// 4. collapse runs of hyphens into one and trim hyphens from both ends;
    /// 5. truncate to 10 characters and trim any hyphen the cut left at the end;
    /// 6. append `-` and the first 4 lower-case hex digits of the 32-bit FNV-1a hash of the whole bundle id's UTF-8
    ///    bytes (`space-race-1a2b`), which tells apart bundle ids whose last components are alike;
    /// 7. if step 5 gave nothing or nothing with a letter, use `gk-` followed by all 8 hex digits of that hash.
    ///
    /// The hash is stable across runs and platforms.
    public static func derived(fromBundleID bundleID: String) -> ServiceType {
        let last = bundleID.split(separator: ".", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        var kept = ""
        for scalar in last.unicodeScalars {
            let lower = scalar.isASCII && scalar.value >= 0x41 && scalar.value <= 0x5A ? Unicode.Scalar(scalar.value | 0x20) ?? scalar : scalar
            guard isAllowed(lower) else { continue }
            if lower == "-", kept.isEmpty || kept.hasSuffix("-") { continue }
            kept.unicodeScalars.append(lower)
        }
        var readable = String(kept.unicodeScalars.prefix(10))
        while readable.hasSuffix("-") { readable.removeLast() }
        let hash = hex8(fnv1a32(bundleID))
        if readable.unicodeScalars.contains(where: isLetter) {
            let candidate = readable + "-" + hash.prefix(4)
            if (try? validate(candidate)) != nil { return ServiceType(unchecked: candidate) }
        }
        return ServiceType(unchecked: "gk-" + hash)
    }

    /// The 32-bit FNV-1a hash of the UTF-8 bytes of `string`.
    public static func fnv1a32(_ string: String) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in string.utf8 {
            hash ^= UInt32(byte)
            hash &*= 0x0100_0193
        }
        return hash
    }

    private init(unchecked name: String) {
        self.name = name
    }

    private static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z")
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        isLetter(scalar) || (scalar >= "0" && scalar <= "9") || scalar == "-"
    }
}
