import Foundation

/// A JSON value: what JMESPath expressions take in and give back.
///
/// Equality is JSON's: numbers by value (so `1` equals `1.0`), strings by Unicode scalars (not by Swift's canonical
/// equivalence), arrays in order and objects regardless of key order. Object keys are Swift `String`s, so two keys
/// that are canonically equivalent but differently encoded are the same key.
///
/// Codable as plain JSON: it decodes from any JSON value and encodes back to the same JSON, with integral numbers
/// within ±2⁵³ written without a fraction. `description` is the compact JSON text, with object keys in code point
/// order.
public enum JSONValue: Sendable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number; JSON has one number type, kept as a `Double`.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; keys are unordered.
    case object([String: JSONValue])

    /// Parses JSON text.
    ///
    /// Throws a `DecodingError` when `json` is not one JSON value (a bare scalar such as `"3"` or `"null"` is fine).
    public init(json: String) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
    }

    /// Parses UTF-8 JSON data.
    ///
    /// Throws a `DecodingError` when `data` is not one JSON value.
    public init(jsonData: Data) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: jsonData)
    }

    /// The JMESPath name of the value's type: `null`, `boolean`, `number`, `string`, `array` or `object`.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Whether JMESPath takes the value as true: everything but `false`, `null`, and empty strings, arrays and objects.
    public var isTruthy: Bool {
        switch self {
        case .null: false
        case .bool(let value): value
        case .number: true
        case .string(let value): !value.isEmpty
        case .array(let value): !value.isEmpty
        case .object(let value): !value.isEmpty
        }
    }
}

extension JSONValue: Equatable {
    /// JSON equality: see the type's documentation.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let left), .bool(let right)): left == right
        case (.number(let left), .number(let right)): left == right
        case (.string(let left), .string(let right)): JSONValue.sameScalars(left, right)
        case (.array(let left), .array(let right)): left == right
        case (.object(let left), .object(let right)): left == right
        default: false
        }
    }

    /// Whether two strings hold the same Unicode scalars, which is the same UTF-8 bytes.
    static func sameScalars(_ left: String, _ right: String) -> Bool {
        var left = left
        var right = right
        return left.withUTF8 { leftBytes in
            right.withUTF8 { rightBytes in
                leftBytes.count == rightBytes.count && leftBytes.elementsEqual(rightBytes)
            }
        }
    }

    /// Orders two strings by Unicode scalars (code points), as JMESPath sorts and compares them.
    static func scalarsPrecede(_ left: String, _ right: String) -> Bool {
        // UTF-8 byte order is code point order.
        left.utf8.lexicographicallyPrecedes(right.utf8)
    }
}

extension JSONValue: Hashable {
    /// Hashes consistently with `==`: integral and fractional spellings of a number, and keys in any order, alike.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0)
        case .bool(let value):
            hasher.combine(1)
            hasher.combine(value)
        case .number(let value):
            hasher.combine(2)
            hasher.combine(value)
        case .string(let value):
            hasher.combine(3)
            var value = value
            value.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .array(let value):
            hasher.combine(4)
            hasher.combine(value)
        case .object(let value):
            hasher.combine(5)
            hasher.combine(value)
        }
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value; `true` and `false` become `.bool`, never numbers.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes as plain JSON; integral numbers within ±2⁵³ as integers.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if let integer = JSONValue.exactInteger(value) {
                try container.encode(integer)
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// `value` as an integer when it is integral and within ±2⁵³, where every integer is exact.
    static func exactInteger(_ value: Double) -> Int64? {
        guard value.rounded() == value, abs(value) <= 9_007_199_254_740_992 else { return nil }
        return Int64(value)
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text: no spaces, object keys in code point order, integral numbers within ±2⁵³ without a fraction.
    public var description: String {
        var text = ""
        write(to: &text)
        return text
    }

    private func write(to text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let value): text += JSONValue.format(value)
        case .string(let value): JSONValue.writeQuoted(value, to: &text)
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                element.write(to: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, key) in JSONValue.sortedKeys(members).enumerated() {
                if index > 0 { text += "," }
                JSONValue.writeQuoted(key, to: &text)
                text += ":"
                members[key, default: .null].write(to: &text)
            }
            text += "}"
        }
    }

    /// A number as JSON text: integers without a fraction, others in Swift's shortest round-tripping form.
    static func format(_ value: Double) -> String {
        if let integer = exactInteger(value) { return String(integer) }
        // JSON has no spelling for these; they can only come from arithmetic overflow (a sum past the Double range).
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return value.description
    }

    /// An object's keys in code point order, the order JMESPath results list an object's members in.
    static func sortedKeys(_ object: [String: JSONValue]) -> [String] {
        object.keys.sorted(by: scalarsPrecede)
    }

    private static func writeQuoted(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            case "\u{00}"..."\u{1F}":
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

extension JSONValue: ExpressibleByNilLiteral {
    /// `nil` is JSON `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// `true` and `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// An integer, as a `Double` (exact within ±2⁵³).
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// A number.
    public init(floatLiteral value: Double) { self = .number(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An object; for a key written twice the last value wins.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
