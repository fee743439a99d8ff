/// A function JMESPath expressions can call: its name, the types of its parameters, and its body.
///
/// Arguments are checked before the body runs: their number (exactly `parameters.count`, or at least that many when
/// the function is variadic, the last parameter repeating) when the expression is compiled, and their types at each
/// call. The body therefore only sees arguments of the declared types.
public struct JMESPathFunction: Sendable {
    /// What the body of a function receives and returns.
    public typealias Body = @Sendable ([JMESPathArgument]) throws(JMESPathError) -> JSONValue

    /// The name expressions call it by.
    public let name: String
    /// For each parameter, the types it accepts.
    public let parameters: [JMESPathType]
    /// Whether the last parameter repeats: the function then takes `parameters.count` arguments or more.
    public let isVariadic: Bool
    /// The function itself, called with arguments already checked against `parameters`.
    public let body: Body

    /// Creates a function; see the type's documentation for how arguments are checked.
    public init(name: String, parameters: [JMESPathType], isVariadic: Bool = false, body: @escaping Body) {
        self.name = name
        self.parameters = parameters
        self.isVariadic = isVariadic
        self.body = body
    }

    /// The types argument `index` must have.
    private func parameter(_ index: Int) -> JMESPathType {
        index < parameters.count ? parameters[index] : parameters.last ?? []
    }

    /// The compile-time checks: the number of arguments, and expression references exactly where they are expected.
    func check(argumentNodes: [JMESPathNode], offset: Int) throws(JMESPathError) {
        let count = argumentNodes.count
        if isVariadic ? count < parameters.count : count != parameters.count {
            let expected = "\(isVariadic ? "at least " : "")\(parameters.count) argument\(parameters.count == 1 ? "" : "s")"
            throw JMESPathError(.invalidArity, "\(name)() takes \(expected), given \(count)", offset: offset)
        }
        for (index, node) in argumentNodes.enumerated() {
            let accepted = parameter(index)
            if case .expressionReference = node.kind {
                guard accepted.contains(.expression) else {
                    throw JMESPathError(
                        .invalidType, "argument \(index + 1) of \(name)() must be \(accepted.phrase), given an expression reference", offset: offset)
                }
            } else if accepted == .expression {
                throw JMESPathError(
                    .invalidType, "argument \(index + 1) of \(name)() must be an expression reference, as in &name", offset: offset)
            }
        }
    }

    /// Calls the function after checking the types of the evaluated arguments.
    func call(_ arguments: [JMESPathArgument]) throws(JMESPathError) -> JSONValue {
        for (index, argument) in arguments.enumerated() {
            guard case .value(let value) = argument else { continue }
            let accepted = parameter(index)
            if !accepted.accepts(value) {
                throw JMESPathError(
                    .invalidType, "argument \(index + 1) of \(name)() must be \(accepted.phrase), given \(JMESPathFunction.describe(value))")
            }
        }
        return try body(arguments)
    }

    /// A value for an error message: its type, and the value itself when short.
    static func describe(_ value: JSONValue) -> String {
        if case .null = value { return "null" }
        let text = value.description
        let article = value.typeName == "array" || value.typeName == "object" ? "an" : "a"
        return text.count <= 40 ? "\(article) \(value.typeName) (\(text))" : "\(article) \(value.typeName)"
    }
}
