/// A compiled JMESPath expression: parse once, then evaluate against any number of JSON values.
///
/// Compiling checks the whole expression, including that every function it calls is in the function table with a
/// valid number of arguments, so a compiled expression only fails at evaluation on the types of the data (for example
/// `abs` of a string). Evaluation does not parse again and may run concurrently from any number of tasks.
///
/// ```swift
/// let expression = try JMESPathExpression(compiling: "players[?skill > `10`].name")
/// let names = try expression.evaluate(data)
/// ```
public struct JMESPathExpression: Sendable, CustomStringConvertible {
    /// The expression's text, as it was compiled (for an expression reference, the text after its `&`).
    public let source: String
    let root: JMESPathNode

    /// Compiles `source`.
    ///
    /// Throws a ``JMESPathError`` with the offset of the problem when `source` is not a valid expression, calls a
    /// function `functions` does not have or with a wrong number of arguments, passes an expression reference where a
    /// function does not take one (or a value where it takes only one), has a slice step of 0, or nests deeper than 128
    /// levels (which keeps compiling and evaluating, in a release build, within the 512 KiB stack Apple platforms give
    /// secondary threads and Swift concurrency's).
    public init(compiling source: String, functions: JMESPathFunctions = .builtIn) throws(JMESPathError) {
        var parser = try JMESPathParser(source: source, functions: functions)
        root = try parser.parse()
        self.source = source
    }

    init(source: String, root: JMESPathNode) {
        self.source = source
        self.root = root
    }

    /// The result of the expression on `data`.
    ///
    /// Throws a ``JMESPathError`` of kind `invalidType` (or `invalidValue`) when a function is given an argument it
    /// does not accept; custom functions may throw their own errors, which come out with the call's offset.
    public func evaluate(_ data: JSONValue) throws(JMESPathError) -> JSONValue {
        try JMESPathInterpreter.evaluate(root, data)
    }

    /// The expression's text.
    public var description: String { source }
}
