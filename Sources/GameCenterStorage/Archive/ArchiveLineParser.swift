/// Parses one archive line: a flat JSON object (RFC 8259) whose values are strings, numbers or `null`. An import reads
/// millions of lines; a general JSON decoder builds and type-tests far more than this shape needs (measured: it was
/// most of an import's time). Anything else — nesting, `true`, a bad escape, trailing bytes — is refused (nil).
struct ArchiveLineParser {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    private init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    /// The object's fields, or nil when the line is not a flat object of strings, numbers and nulls.
    static func parse(_ line: ArraySlice<UInt8>) -> [String: JSONCell]? {
        var parser = ArchiveLineParser(line)
        return parser.object()
    }

    /// The values of a line whose keys are `keys` in that order with no space between tokens — how an export writes
    /// every line — or nil for any other line (the general ``parse(_:)`` then reads it or says what is wrong). Each key
    /// is given with its quotes and colon (`"name":`). Skipping the dictionary makes an import's parse about twice as fast.
    static func parse(_ line: ArraySlice<UInt8>, inOrder keys: [[UInt8]]) -> [JSONCell]? {
        var parser = ArchiveLineParser(line)
        return parser.orderedObject(keys)
    }

    private mutating func orderedObject(_ keys: [[UInt8]]) -> [JSONCell]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var values: [JSONCell] = []
        values.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() {
            guard position == 0 || take(UInt8(ascii: ",")), bytes[index...].starts(with: key) else { return nil }
            index += key.count
            guard let value = value() else { return nil }
            values.append(value)
        }
        guard take(UInt8(ascii: "}")), index == bytes.endIndex else { return nil }
        return values
    }

    private mutating func object() -> [String: JSONCell]? {
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var fields: [String: JSONCell] = [:]
        skipSpace()
        if take(UInt8(ascii: "}")) { return atEnd() ? fields : nil }
        while true {
            skipSpace()
            guard let key = string() else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            guard let value = value(), fields.updateValue(value, forKey: key) == nil else { return nil }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return nil }
            return atEnd() ? fields : nil
        }
    }

    private mutating func value() -> JSONCell? {
        guard index < bytes.endIndex else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string().map(JSONCell.text)
        case UInt8(ascii: "n"):
            guard bytes[index...].starts(with: "null".utf8) else { return nil }
            index += 4
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return nil
        }
    }

    private mutating func number() -> JSONCell? {
        let start = index
        var integral = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digits = index
        while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        guard index > digits, bytes[digits] != UInt8(ascii: "0") || index == digits + 1 else { return nil }
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            let fraction = index
            while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > fraction else { return nil }
        }
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let exponent = index
            while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > exponent else { return nil }
        }
        // Up to 18 digits always fit in an Int64: no text to make.
        if integral, index - digits <= 18 {
            let magnitude = bytes[digits..<index].reduce(Int64(0)) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
            return .integer(digits > start ? -magnitude : magnitude)
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let value = Int64(text) { return .integer(value) }
        return Double(text).map(JSONCell.real)
    }

    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        // Most strings have no escape: their bytes are the string.
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: bytes[start..<index], as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { return nil }
            index += 1
        }
        var decoded = Array(bytes[start..<index])
        while index < bytes.endIndex {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(validating: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.endIndex else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4() else { return nil }
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { return nil }
                    decoded.append(contentsOf: Array(String(Character(unicode)).utf8))
                default: return nil
                }
            default:
                guard byte >= 0x20 else { return nil }
                decoded.append(byte)
            }
        }
        return nil
    }

    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.endIndex else { return nil }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            guard let digit = Character(Unicode.Scalar(byte)).hexDigitValue else { return nil }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.endIndex, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipSpace() {
        while index < bytes.endIndex, Self.isSpace(bytes[index]) { index += 1 }
    }

    private func atEnd() -> Bool {
        var rest = index
        while rest < bytes.endIndex, Self.isSpace(bytes[rest]) { rest += 1 }
        return rest == bytes.endIndex
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
    }
}
