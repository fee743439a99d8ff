/// One argument of a function call, as the function receives it: a JSON value, or an unevaluated expression
/// reference (for parameters that accept ``JMESPathType/expression``).
public enum JMESPathArgument: Sendable {
    /// The value the argument expression gave.
    case value(JSONValue)
    /// An expression reference, `&expression`; evaluate it against whatever the function chooses.
    case expression(JMESPathExpression)

    /// The value, or nil for an expression reference.
    public var value: JSONValue? {
        if case .value(let value) = self { return value }
        return nil
    }

    /// The expression reference, or nil for a value.
    public var expression: JMESPathExpression? {
        if case .expression(let expression) = self { return expression }
        return nil
    }
}
