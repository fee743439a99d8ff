extension JMESPathFunctions {
    /// The functions of the JMESPath specification: abs, avg, ceil, contains, ends_with, floor, join, keys, length,
    /// map, max, max_by, merge, min, min_by, not_null, reverse, sort, sort_by, starts_with, sum, to_array, to_number,
    /// to_string, type and values.
    ///
    /// Strings compare, sort and measure by Unicode scalars (code points). `keys`, `values` and `*` list an object's
    /// members in the code point order of its keys, so results do not depend on how the object was built.
    public static let builtIn = JMESPathFunctions([
        JMESPathFunction(name: "abs", parameters: [.number]) { arguments throws(JMESPathError) in
            .number(abs(try arguments.number(0)))
        },
        JMESPathFunction(name: "avg", parameters: [.arrayOfNumbers]) { arguments throws(JMESPathError) in
            let numbers = try arguments.numbers(0)
            return numbers.isEmpty ? .null : .number(numbers.reduce(0, +) / Double(numbers.count))
        },
        JMESPathFunction(name: "ceil", parameters: [.number]) { arguments throws(JMESPathError) in
            .number(try arguments.number(0).rounded(.up))
        },
        JMESPathFunction(name: "contains", parameters: [[.array, .string], .any]) { arguments throws(JMESPathError) in
            let search = try arguments.value(1)
            switch try arguments.value(0) {
            case .array(let elements): return .bool(elements.contains(search))
            case .string(let subject):
                guard case .string(let needle) = search else { return false }
                return .bool(needle.isEmpty || subject.utf8.firstRange(of: needle.utf8) != nil)
            default: throw arguments.mismatch(0, "an array or a string")
            }
        },
        JMESPathFunction(name: "ends_with", parameters: [.string, .string]) { arguments throws(JMESPathError) in
            let subject = try arguments.string(0).utf8
            let suffix = try arguments.string(1).utf8
            return .bool(subject.count >= suffix.count && subject.suffix(suffix.count).elementsEqual(suffix))
        },
        JMESPathFunction(name: "floor", parameters: [.number]) { arguments throws(JMESPathError) in
            .number(try arguments.number(0).rounded(.down))
        },
        JMESPathFunction(name: "join", parameters: [.string, .arrayOfStrings]) { arguments throws(JMESPathError) in
            .string(try arguments.strings(1).joined(separator: try arguments.string(0)))
        },
        JMESPathFunction(name: "keys", parameters: [.object]) { arguments throws(JMESPathError) in
            .array(JSONValue.sortedKeys(try arguments.object(0)).map(JSONValue.string))
        },
        JMESPathFunction(name: "length", parameters: [[.string, .array, .object]]) { arguments throws(JMESPathError) in
            switch try arguments.value(0) {
            case .string(let string): return .number(Double(string.unicodeScalars.count))
            case .array(let elements): return .number(Double(elements.count))
            case .object(let members): return .number(Double(members.count))
            default: throw arguments.mismatch(0, "a string, an array or an object")
            }
        },
        JMESPathFunction(name: "map", parameters: [.expression, .array]) { arguments throws(JMESPathError) in
            let expression = try arguments.expression(0)
            let elements = try arguments.array(1)
            var results: [JSONValue] = []
            results.reserveCapacity(elements.count)
            for element in elements { results.append(try expression.evaluate(element)) }
            return .array(results)
        },
        JMESPathFunction(name: "max", parameters: [[.arrayOfNumbers, .arrayOfStrings]]) { arguments throws(JMESPathError) in
            try extreme(arguments.array(0), function: "max") { $1 < $0 }
        },
        JMESPathFunction(name: "max_by", parameters: [.array, .expression]) { arguments throws(JMESPathError) in
            try extreme(by: arguments, function: "max_by") { $1 < $0 }
        },
        JMESPathFunction(name: "merge", parameters: [.object], isVariadic: true) { arguments throws(JMESPathError) in
            var merged: [String: JSONValue] = [:]
            for index in arguments.indices { merged.merge(try arguments.object(index)) { _, later in later } }
            return .object(merged)
        },
        JMESPathFunction(name: "min", parameters: [[.arrayOfNumbers, .arrayOfStrings]]) { arguments throws(JMESPathError) in
            try extreme(arguments.array(0), function: "min") { $0 < $1 }
        },
        JMESPathFunction(name: "min_by", parameters: [.array, .expression]) { arguments throws(JMESPathError) in
            try extreme(by: arguments, function: "min_by") { $0 < $1 }
        },
        JMESPathFunction(name: "not_null", parameters: [.any], isVariadic: true) { arguments throws(JMESPathError) in
            for argument in arguments {
                if let value = argument.value, value != .null { return value }
            }
            return .null
        },
        JMESPathFunction(name: "reverse", parameters: [[.string, .array]]) { arguments throws(JMESPathError) in
            switch try arguments.value(0) {
            case .string(let string): return .string(String(String.UnicodeScalarView(string.unicodeScalars.reversed())))
            case .array(let elements): return .array(elements.reversed())
            default: throw arguments.mismatch(0, "a string or an array")
            }
        },
        JMESPathFunction(name: "sort", parameters: [[.arrayOfNumbers, .arrayOfStrings]]) { arguments throws(JMESPathError) in
            let elements = try arguments.array(0)
            guard let keys = SortKeys(elements) else { throw arguments.mismatch(0, "an array of numbers or an array of strings") }
            return .array(keys.sortedIndices().map { elements[$0] })
        },
        JMESPathFunction(name: "sort_by", parameters: [.array, .expression]) { arguments throws(JMESPathError) in
            let elements = try arguments.array(0)
            let keys = try sortKeys(of: elements, by: arguments.expression(1), function: "sort_by")
            return .array(keys.sortedIndices().map { elements[$0] })
        },
        JMESPathFunction(name: "starts_with", parameters: [.string, .string]) { arguments throws(JMESPathError) in
            .bool(try arguments.string(0).utf8.starts(with: try arguments.string(1).utf8))
        },
        JMESPathFunction(name: "sum", parameters: [.arrayOfNumbers]) { arguments throws(JMESPathError) in
            .number(try arguments.numbers(0).reduce(0, +))
        },
        JMESPathFunction(name: "to_array", parameters: [.any]) { arguments throws(JMESPathError) in
            let value = try arguments.value(0)
            if case .array = value { return value }
            return [value]
        },
        JMESPathFunction(name: "to_number", parameters: [.any]) { arguments throws(JMESPathError) in
            switch try arguments.value(0) {
            case .number(let number): return .number(number)
            case .string(let string): return parseNumber(string).map(JSONValue.number) ?? .null
            default: return .null
            }
        },
        JMESPathFunction(name: "to_string", parameters: [.any]) { arguments throws(JMESPathError) in
            let value = try arguments.value(0)
            if case .string = value { return value }
            return .string(value.description)
        },
        JMESPathFunction(name: "type", parameters: [.any]) { arguments throws(JMESPathError) in
            .string(try arguments.value(0).typeName)
        },
        JMESPathFunction(name: "values", parameters: [.object]) { arguments throws(JMESPathError) in
            let members = try arguments.object(0)
            return .array(JSONValue.sortedKeys(members).map { members[$0, default: .null] })
        },
    ])

    /// The element of `elements` (all numbers or all strings) that no other comes `before`; the first of equals.
    private static func extreme(
        _ elements: [JSONValue], function: String, before: (SortKey, SortKey) -> Bool
    ) throws(JMESPathError) -> JSONValue {
        guard let keys = SortKeys(elements) else {
            throw JMESPathError(.invalidType, "argument 1 of \(function)() must be an array of numbers or an array of strings")
        }
        return keys.extremeIndex(before: before).map { elements[$0] } ?? .null
    }

    /// For min_by and max_by: the element whose key (the expression applied to it) no other key comes `before`.
    private static func extreme(
        by arguments: [JMESPathArgument], function: String, before: (SortKey, SortKey) -> Bool
    ) throws(JMESPathError) -> JSONValue {
        let elements = try arguments.array(0)
        let keys = try sortKeys(of: elements, by: arguments.expression(1), function: function)
        return keys.extremeIndex(before: before).map { elements[$0] } ?? .null
    }

    /// The expression applied to each element, which must give all numbers or all strings.
    private static func sortKeys(
        of elements: [JSONValue], by expression: JMESPathExpression, function: String
    ) throws(JMESPathError) -> SortKeys {
        var values: [JSONValue] = []
        values.reserveCapacity(elements.count)
        for element in elements { values.append(try expression.evaluate(element)) }
        guard let keys = SortKeys(values) else {
            var types: [String] = []
            for value in values where !types.contains(value.typeName) { types.append(value.typeName) }
            throw JMESPathError(
                .invalidType, "\(function)() needs &\(expression.source) to give all numbers or all strings; it gave \(types.joined(separator: ", "))")
        }
        return keys
    }

    /// A number as JSON writes it (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`), or nil for any other string
    /// and for numbers beyond the range of a Double.
    static func parseNumber(_ string: String) -> Double? {
        var bytes = string.utf8[...]
        func digits() -> Int {
            let count = bytes.prefix(while: { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }).count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        if bytes.first == UInt8(ascii: "0") {
            bytes = bytes.dropFirst()
        } else if digits() == 0 {
            return nil
        }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            if digits() == 0 { return nil }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            if digits() == 0 { return nil }
        }
        guard bytes.isEmpty, let number = Double(string), number.isFinite else { return nil }
        return number
    }
}

/// A key that sorts: a number or a string (compared by Unicode scalars).
private enum SortKey {
    case number(Double)
    case string(String)

    static func < (left: SortKey, right: SortKey) -> Bool {
        switch (left, right) {
        case (.number(let left), .number(let right)): left < right
        case (.string(let left), .string(let right)): JSONValue.scalarsPrecede(left, right)
        default: false
        }
    }
}

/// The sort keys of an array's elements, all numbers or all strings.
private struct SortKeys {
    let keys: [SortKey]

    /// Nil unless `values` are all numbers or all strings.
    init?(_ values: [JSONValue]) {
        var keys: [SortKey] = []
        keys.reserveCapacity(values.count)
        for value in values {
            switch (value, keys.first) {
            case (.number(let number), .number?), (.number(let number), nil): keys.append(.number(number))
            case (.string(let string), .string?), (.string(let string), nil): keys.append(.string(string))
            default: return nil
            }
        }
        self.keys = keys
    }

    /// The indices in the order of their keys; equal keys keep their order.
    func sortedIndices() -> [Int] {
        keys.indices.sorted { keys[$0] < keys[$1] || (!(keys[$1] < keys[$0]) && $0 < $1) }
    }

    /// The index of the first key no other comes `before`, or nil when there are none.
    func extremeIndex(before: (SortKey, SortKey) -> Bool) -> Int? {
        guard var best = keys.indices.first else { return nil }
        for index in keys.indices.dropFirst() where before(keys[index], keys[best]) { best = index }
        return best
    }
}

extension [JMESPathArgument] {
    /// The error for an argument that is not of the type the function declared (which the call's check prevents).
    fileprivate func mismatch(_ index: Int, _ expected: String) -> JMESPathError {
        JMESPathError(.invalidType, "argument \(index + 1) must be \(expected)")
    }

    fileprivate func value(_ index: Int) throws(JMESPathError) -> JSONValue {
        guard index < count, case .value(let value) = self[index] else { throw mismatch(index, "a value") }
        return value
    }

    fileprivate func expression(_ index: Int) throws(JMESPathError) -> JMESPathExpression {
        guard index < count, case .expression(let expression) = self[index] else { throw mismatch(index, "an expression reference") }
        return expression
    }

    fileprivate func number(_ index: Int) throws(JMESPathError) -> Double {
        guard case .number(let number) = try value(index) else { throw mismatch(index, "a number") }
        return number
    }

    fileprivate func string(_ index: Int) throws(JMESPathError) -> String {
        guard case .string(let string) = try value(index) else { throw mismatch(index, "a string") }
        return string
    }

    fileprivate func array(_ index: Int) throws(JMESPathError) -> [JSONValue] {
        guard case .array(let elements) = try value(index) else { throw mismatch(index, "an array") }
        return elements
    }

    fileprivate func object(_ index: Int) throws(JMESPathError) -> [String: JSONValue] {
        guard case .object(let members) = try value(index) else { throw mismatch(index, "an object") }
        return members
    }

    fileprivate func numbers(_ index: Int) throws(JMESPathError) -> [Double] {
        var numbers: [Double] = []
        for element in try array(index) {
            guard case .number(let number) = element else { throw mismatch(index, "an array of numbers") }
            numbers.append(number)
        }
        return numbers
    }

    fileprivate func strings(_ index: Int) throws(JMESPathError) -> [String] {
        var strings: [String] = []
        for element in try array(index) {
            guard case .string(let string) = element else { throw mismatch(index, "an array of strings") }
            strings.append(string)
        }
        return strings
    }
}
