/// Evaluates a compiled syntax tree against a JSON value, as the JMESPath specification defines each kind of node.
enum JMESPathInterpreter {
    // Each case with more than a line of work has its own function: a debug build gives a function one stack frame
    // as large as all its locals together, and evaluation recurses as deep as the tree.

    static func evaluate(_ node: JMESPathNode, _ value: JSONValue) throws(JMESPathError) -> JSONValue {
        switch node.kind {
        case .current:
            return value
        case .field(let name):
            guard case .object(let members) = value else { return .null }
            return members[name] ?? .null
        case .literal(let literal):
            return literal
        case .subexpression(let left, let right), .pipe(let left, let right):
            return try evaluate(right, evaluate(left, value))
        case .index(let index):
            return element(at: index, of: value)
        case .slice(let start, let stop, let step):
            guard case .array(let elements) = value else { return .null }
            return .array(slice(elements, start: start, stop: stop, step: step ?? 1))
        case .projection(let left, let right):
            guard case .array(let elements) = try evaluate(left, value) else { return .null }
            return .array(try project(elements, right))
        case .valueProjection(let left, let right):
            guard case .object(let members) = try evaluate(left, value) else { return .null }
            return .array(try project(members.sorted { JSONValue.scalarsPrecede($0.key, $1.key) }.map(\.value), right))
        case .filterProjection(let left, let condition, let right):
            guard case .array(let elements) = try evaluate(left, value) else { return .null }
            return .array(try filter(elements, condition, right))
        case .flatten(let operand):
            guard case .array(let elements) = try evaluate(operand, value) else { return .null }
            return .array(flatten(elements))
        case .multiSelectList(let nodes):
            if case .null = value { return .null }
            return .array(try nodes.map { node throws(JMESPathError) in try evaluate(node, value) })
        case .multiSelectHash(let pairs):
            if case .null = value { return .null }
            return .object(try multiSelectHash(pairs, value))
        case .or(let left, let right):
            let first = try evaluate(left, value)
            return first.isTruthy ? first : try evaluate(right, value)
        case .and(let left, let right):
            let first = try evaluate(left, value)
            return first.isTruthy ? try evaluate(right, value) : first
        case .not(let operand):
            return .bool(!(try evaluate(operand, value).isTruthy))
        case .comparison(let comparator, let left, let right):
            return compare(comparator, try evaluate(left, value), try evaluate(right, value))
        case .function(let function, let arguments, let offset):
            return try call(function, arguments, offset: offset, value)
        case .expressionReference(let expression):
            // The parser only puts references in argument positions, which `call` handles.
            throw JMESPathError(.invalidType, "the expression reference &\(expression.source) is not a value")
        }
    }

    private static func element(at index: Int, of value: JSONValue) -> JSONValue {
        guard case .array(let elements) = value else { return .null }
        let position = index < 0 ? elements.count + index : index
        return elements.indices.contains(position) ? elements[position] : .null
    }

    private static func filter(_ elements: [JSONValue], _ condition: JMESPathNode, _ right: JMESPathNode) throws(JMESPathError) -> [JSONValue] {
        var results: [JSONValue] = []
        for element in elements where try evaluate(condition, element).isTruthy {
            let result = try evaluate(right, element)
            if case .null = result { continue }
            results.append(result)
        }
        return results
    }

    private static func flatten(_ elements: [JSONValue]) -> [JSONValue] {
        var results: [JSONValue] = []
        results.reserveCapacity(elements.count)
        for element in elements {
            if case .array(let inner) = element {
                results.append(contentsOf: inner)
            } else {
                results.append(element)
            }
        }
        return results
    }

    private static func multiSelectHash(_ pairs: [(key: String, value: JMESPathNode)], _ value: JSONValue) throws(JMESPathError) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        members.reserveCapacity(pairs.count)
        for pair in pairs { members[pair.key] = try evaluate(pair.value, value) }
        return members
    }

    /// Calls `function` with the arguments evaluated against `value` (references passed as they are); an error
    /// without a place gets the call's.
    private static func call(
        _ function: JMESPathFunction, _ argumentNodes: [JMESPathNode], offset: Int, _ value: JSONValue
    ) throws(JMESPathError) -> JSONValue {
        var arguments: [JMESPathArgument] = []
        arguments.reserveCapacity(argumentNodes.count)
        for argument in argumentNodes {
            if case .expressionReference(let expression) = argument.kind {
                arguments.append(.expression(expression))
            } else {
                arguments.append(.value(try evaluate(argument, value)))
            }
        }
        do {
            return try function.call(arguments)
        } catch {
            var located = error
            if located.offset == nil { located.offset = offset }
            throw located
        }
    }

    private static func project(_ elements: [JSONValue], _ node: JMESPathNode) throws(JMESPathError) -> [JSONValue] {
        var results: [JSONValue] = []
        results.reserveCapacity(elements.count)
        for element in elements {
            let result = try evaluate(node, element)
            if case .null = result { continue }
            results.append(result)
        }
        return results
    }

    /// Equality for any values; ordering only for numbers, null otherwise.
    private static func compare(_ comparator: JMESPathNode.Comparator, _ left: JSONValue, _ right: JSONValue) -> JSONValue {
        switch comparator {
        case .equal: return .bool(left == right)
        case .notEqual: return .bool(left != right)
        default: break
        }
        guard case .number(let left) = left, case .number(let right) = right else { return .null }
        switch comparator {
        case .less: return .bool(left < right)
        case .lessOrEqual: return .bool(left <= right)
        case .greater: return .bool(left > right)
        default: return .bool(left >= right)
        }
    }

    /// Python's slice semantics: bounds count from the end when negative and are clamped to the array.
    private static func slice(_ elements: [JSONValue], start: Int?, stop: Int?, step: Int) -> [JSONValue] {
        let count = elements.count
        let (lower, upper) = step < 0 ? (-1, count - 1) : (0, count)
        func clamp(_ bound: Int?, default defaultBound: Int) -> Int {
            guard let bound else { return defaultBound }
            if bound < 0 { return max(bound + count, lower) }
            return min(bound, upper)
        }
        var position = clamp(start, default: step < 0 ? upper : lower)
        let end = clamp(stop, default: step < 0 ? lower : upper)
        var results: [JSONValue] = []
        while step > 0 ? position < end : position > end {
            results.append(elements[position])
            let (next, overflow) = position.addingReportingOverflow(step)
            if overflow { break }
            position = next
        }
        return results
    }
}
