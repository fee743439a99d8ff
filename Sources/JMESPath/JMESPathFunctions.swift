/// The functions JMESPath expressions may call, by name.
///
/// Start from ``builtIn`` (the specification's functions) and add your own with
/// ``adding(_:parameters:isVariadic:_:)``. Expressions are compiled against a table: a call of a name the table does
/// not have, or with a wrong number of arguments, fails compilation.
///
/// ```swift
/// let functions = JMESPathFunctions.builtIn.adding("divide", parameters: [.number, .number]) { arguments in
///     guard case .value(.number(let a)) = arguments[0], case .value(.number(let b)) = arguments[1] else { return nil }
///     return b == 0 ? nil : .number(a / b)
/// }
/// let expression = try JMESPathExpression(compiling: "divide(score, `2`)", functions: functions)
/// ```
public struct JMESPathFunctions: Sendable {
    private var table: [String: JMESPathFunction]

    /// A table of the given functions.
    init(_ functions: [JMESPathFunction]) {
        table = Dictionary(functions.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The function called `name`, if the table has one.
    public subscript(name: String) -> JMESPathFunction? { table[name] }

    /// This table with `function` added, replacing any function of the same name (a built-in one included).
    public func adding(_ function: JMESPathFunction) -> JMESPathFunctions {
        var copy = self
        copy.table[function.name] = function
        return copy
    }

    /// This table with a function added, replacing any function of the same name; see ``JMESPathFunction``.
    public func adding(
        _ name: String, parameters: [JMESPathType], isVariadic: Bool = false, _ body: @escaping JMESPathFunction.Body
    ) -> JMESPathFunctions {
        adding(JMESPathFunction(name: name, parameters: parameters, isVariadic: isVariadic, body: body))
    }
}
