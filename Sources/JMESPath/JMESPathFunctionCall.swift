/// A call of a function inside a compiled expression (``JMESPathExpression/functionCalls(named:)``): its text, its
/// arguments and the call itself, each evaluable alone — to show what part of an expression gives now.
public struct JMESPathFunctionCall: Sendable {
    /// The function's name.
    public let name: String
    /// The call as the expression writes it, from the function's name to its closing parenthesis.
    public let source: String
    /// Each argument, in order (an expression reference's argument evaluates to its expression's result).
    public let arguments: [JMESPathExpression]
    /// The whole call.
    public let call: JMESPathExpression
}

extension JMESPathExpression {
    /// The calls of the functions named `names` in this expression, outermost first, in the order they are written
    /// (calls inside expression references included).
    public func functionCalls(named names: Set<String>) -> [JMESPathFunctionCall] {
        var calls: [JMESPathFunctionCall] = []
        func visit(_ node: JMESPathNode) {
            if case .function(let function, let arguments, let offset) = node.kind, names.contains(function.name) {
                let text = Self.callText(in: source, at: offset)
                calls.append(
                    JMESPathFunctionCall(
                        name: function.name, source: text, arguments: arguments.map { JMESPathExpression(source: text, root: $0) },
                        call: JMESPathExpression(source: text, root: node)))
            }
            for child in JMESPathNode.children(of: node.kind) { visit(child) }
        }
        visit(root)
        return calls
    }

    /// The text of the call whose name starts at scalar `offset` of `source` (the parser's offsets count Unicode
    /// scalars): up to its closing parenthesis, skipping the parentheses inside literals and strings.
    private static func callText(in source: String, at offset: Int) -> String {
        let scalars = Array(source.unicodeScalars)
        guard offset >= 0, offset < scalars.count else { return source }
        func text(through last: Int) -> String { String(String.UnicodeScalarView(scalars[offset...last])) }
        var (depth, index, quote): (Int, Int, Unicode.Scalar?) = (0, offset, nil)
        while index < scalars.count {
            let scalar = scalars[index]
            if let open = quote {
                if scalar == "\\" {
                    index += 1
                } else if scalar == open {
                    quote = nil
                }
            } else if scalar == "`" || scalar == "'" || scalar == "\"" {
                quote = scalar
            } else if scalar == "(" {
                depth += 1
            } else if scalar == ")" {
                depth -= 1
                if depth == 0 { return text(through: index) }
            }
            index += 1
        }
        return text(through: scalars.count - 1)
    }
}
