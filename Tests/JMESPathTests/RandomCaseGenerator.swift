import JMESPath

/// Random JMESPath expressions built from the grammar, and random JSON data for them, from a seed: the same seed
/// always gives the same cases.
///
/// Expressions draw identifiers from the keys the data uses (and one it never has), so that most of them select
/// something; a few are mutated (a character dropped, inserted or the text cut short) to compare syntax errors too.
struct RandomCaseGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    /// SplitMix64.
    private mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private mutating func int(_ range: Range<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    private mutating func chance(_ percent: Int) -> Bool { int(0..<100) < percent }

    private mutating func pick<T>(_ choices: [T]) -> T { choices[int(0..<choices.count)] }

    static let keys = ["a", "b", "c", "foo", "bar"]
    static let strings = ["", "a", "b", "foo", "bar", "Foo", "é", "ü🎉", "1", "-2.5", "1e3", " 7", "+1", "0x10", "a b", "a\"b", "\\"]
    static let numbers: [Double] = [-3, -1, 0, 1, 2, 3, 5, 10, 0.5, -1.5, 2.25, 1e-3, 100.125]

    // MARK: Data

    /// A JSON object with some of the keys, values of any type nested up to `depth`.
    mutating func data() -> JSONValue {
        var members: [String: JSONValue] = [:]
        for key in Self.keys where chance(80) { members[key] = value(depth: 3) }
        return .object(members)
    }

    private mutating func value(depth: Int) -> JSONValue {
        switch int(0..<(depth > 0 ? 12 : 6)) {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2, 3: return .number(pick(Self.numbers))
        case 4, 5: return .string(pick(Self.strings))
        case 6, 7:
            return .array((0..<int(0..<5)).map { _ in value(depth: depth - 1) })
        case 8, 9:
            // Arrays of objects, what projections and filters are for.
            return .array((0..<int(0..<5)).map { _ in object(depth: depth - 1) })
        default:
            return object(depth: depth - 1)
        }
    }

    private mutating func object(depth: Int) -> JSONValue {
        var members: [String: JSONValue] = [:]
        for key in Self.keys where chance(50) { members[key] = value(depth: depth) }
        return .object(members)
    }

    // MARK: Expressions

    /// An expression of up to `depth` levels, sometimes mutated into a (probably) invalid one.
    mutating func expression() -> String {
        let text = expression(depth: int(1..<5))
        guard chance(8), !text.isEmpty else { return text }
        var scalars = Array(text.unicodeScalars)
        let position = int(0..<scalars.count)
        switch int(0..<3) {
        case 0: scalars.remove(at: position)
        case 1: scalars.insert(pick(Array("[]{}().,:|&!*@?'`\"=<> -0".unicodeScalars)), at: position)
        default: scalars.removeSubrange(position...)
        }
        return String(String.UnicodeScalarView(scalars))
    }

    private mutating func expression(depth: Int) -> String {
        guard depth > 0 else { return leaf() }
        let d = depth - 1
        switch int(0..<20) {
        case 0, 1: return leaf()
        case 2, 3: return "\(expression(depth: d)).\(dotRightHandSide(depth: d))"
        case 4: return "\(expression(depth: d))[\(int(-3..<4))]"
        case 5: return "\(expression(depth: d))[\(slice())]\(projectionRightHandSide(depth: d))"
        case 6: return "\(expression(depth: d))[*]\(projectionRightHandSide(depth: d))"
        case 7: return "\(expression(depth: d))[]\(projectionRightHandSide(depth: d))"
        case 8: return "\(expression(depth: d)).*\(projectionRightHandSide(depth: d))"
        case 9, 10: return "\(expression(depth: d))[?\(condition(depth: d))]\(projectionRightHandSide(depth: d))"
        case 11: return "[\(list(depth: d))]"
        case 12: return "{\(hash(depth: d))}"
        case 13: return "\(expression(depth: d)) | \(expression(depth: d))"
        case 14: return "\(expression(depth: d)) \(pick(["||", "&&"])) \(expression(depth: d))"
        case 15: return "!\(expression(depth: d))"
        case 16: return "\(expression(depth: d)) \(comparator()) \(operand(depth: d))"
        case 17: return "(\(expression(depth: d)))"
        default: return function(depth: d)
        }
    }

    private mutating func leaf() -> String {
        switch int(0..<12) {
        case 0...5: return pick(Self.keys + ["x"])
        case 6: return "@"
        case 7: return "\"\(pick(["a", "foo", "a b", "é", "a\\\"b", "\\u0061"]))\""
        case 8, 9: return literal()
        default: return "'\(pick(["", "a", "foo", "1", "a b", "it\\'s", "\\\\"]))'"
        }
    }

    private mutating func literal() -> String {
        switch int(0..<8) {
        case 0: return "`\(JSONValue.number(pick(Self.numbers)))`"
        case 1: return "`\(JSONValue.string(pick(["a", "foo", "é"])))`"
        case 2: return "`\(pick(["true", "false", "null"]))`"
        case 3: return "`\(value(depth: 1))`"
        case 4: return "`\(pick(["foo", "a b"]))`"  // the legacy form: unquoted text is a string
        default: return "`\(JSONValue.number(Double(int(-2..<6))))`"
        }
    }

    private mutating func slice() -> String {
        func bound(_ generator: inout RandomCaseGenerator) -> String {
            generator.chance(40) ? "" : String(generator.int(-4..<5))
        }
        let start = bound(&self)
        let stop = bound(&self)
        if chance(50) { return "\(start):\(stop)" }
        let step = pick([-2, -1, 1, 2, 3])
        return "\(start):\(stop):\(chance(20) ? "" : String(step))"
    }

    private mutating func dotRightHandSide(depth: Int) -> String {
        switch int(0..<10) {
        case 0...4: return pick(Self.keys + ["x"])
        case 5: return "\"\(pick(Self.keys))\""
        case 6: return "[\(list(depth: depth))]"
        case 7: return "{\(hash(depth: depth))}"
        case 8: return "*"
        default: return function(depth: depth)
        }
    }

    private mutating func projectionRightHandSide(depth: Int) -> String {
        switch int(0..<8) {
        case 0...2: return ""
        case 3, 4: return ".\(dotRightHandSide(depth: depth))"
        case 5: return "[\(int(-2..<3))]"
        case 6: return "[*]"
        default: return "[?\(condition(depth: depth))]"
        }
    }

    private mutating func condition(depth: Int) -> String {
        switch int(0..<6) {
        case 0...2: return "\(expression(depth: depth)) \(comparator()) \(operand(depth: depth))"
        case 3: return expression(depth: depth)
        case 4: return "!\(expression(depth: depth))"
        default: return "\(expression(depth: depth)) && \(expression(depth: depth))"
        }
    }

    private mutating func comparator() -> String { pick(["==", "!=", "<", "<=", ">", ">="]) }

    private mutating func operand(depth: Int) -> String {
        chance(60) ? literal() : expression(depth: depth)
    }

    private mutating func list(depth: Int) -> String {
        (0..<int(1..<4)).map { _ in expression(depth: depth) }.joined(separator: ", ")
    }

    private mutating func hash(depth: Int) -> String {
        (0..<int(1..<4)).map { _ in "\(pick(Self.keys)): \(expression(depth: depth))" }.joined(separator: ", ")
    }

    /// A call of a built-in function with arguments of plausible kinds (often, but not always, the right types).
    private mutating func function(depth: Int) -> String {
        let any = { (generator: inout RandomCaseGenerator) in generator.expression(depth: depth) }
        let array = { (generator: inout RandomCaseGenerator) -> String in
            generator.chance(70) ? "\(generator.pick(Self.keys))[*].\(generator.pick(Self.keys))" : generator.expression(depth: depth)
        }
        let reference = { (generator: inout RandomCaseGenerator) in "&\(generator.expression(depth: max(depth - 1, 0)))" }
        let (name, arguments): (String, [(inout RandomCaseGenerator) -> String])
        switch int(0..<26) {
        case 0: (name, arguments) = ("abs", [any])
        case 1: (name, arguments) = ("avg", [array])
        case 2: (name, arguments) = ("ceil", [any])
        case 3: (name, arguments) = ("contains", [any, any])
        case 4: (name, arguments) = ("ends_with", [any, any])
        case 5: (name, arguments) = ("floor", [any])
        case 6: (name, arguments) = ("join", [{ _ in "', '" }, array])
        case 7: (name, arguments) = ("keys", [any])
        case 8: (name, arguments) = ("length", [any])
        case 9: (name, arguments) = ("map", [reference, array])
        case 10: (name, arguments) = ("max", [array])
        case 11: (name, arguments) = ("max_by", [any, reference])
        case 12: (name, arguments) = ("merge", [any, any])
        case 13: (name, arguments) = ("min", [array])
        case 14: (name, arguments) = ("min_by", [any, reference])
        case 15: (name, arguments) = ("not_null", [any, any, any])
        case 16: (name, arguments) = ("reverse", [any])
        case 17: (name, arguments) = ("sort", [array])
        case 18: (name, arguments) = ("sort_by", [any, reference])
        case 19: (name, arguments) = ("starts_with", [any, any])
        case 20: (name, arguments) = ("sum", [array])
        case 21: (name, arguments) = ("to_array", [any])
        case 22: (name, arguments) = ("to_number", [any])
        case 23: (name, arguments) = ("to_string", [any])
        case 24: (name, arguments) = ("type", [any])
        default: (name, arguments) = ("values", [any])
        }
        var texts: [String] = []
        for argument in arguments { texts.append(argument(&self)) }
        return "\(name)(\(texts.joined(separator: ", ")))"
    }
}
