/// Parses a JMESPath expression into a syntax tree by top-down operator precedence (Pratt), with the binding powers of
/// the reference implementation, resolving function calls against a function table as it goes.
struct JMESPathParser {
    /// How deep an expression may nest, in parser recursion and in tree height; deeper ones are refused. At 128, the
    /// deepest expressions compile and evaluate in under 320 KiB of stack in release builds (1.5 MiB in debug
    /// builds), within the 512 KiB of a secondary thread on Apple platforms; real rules nest a few levels.
    static let maximumDepth = 128

    private let scalars: [Unicode.Scalar]
    private let tokens: [JMESPathToken]
    private let functions: JMESPathFunctions
    private var index = 0
    private var depth = 0
    /// The first error that is not a syntax error (unknown function, wrong arity…): reported only once the whole
    /// expression has parsed, so that a syntax error anywhere takes precedence, as it does in the reference.
    private var semanticError: JMESPathError?

    /// Tokens whose binding power is below this end a projection's right-hand side.
    private static let projectionStop = 10

    init(source: String, functions: JMESPathFunctions) throws(JMESPathError) {
        scalars = Array(source.unicodeScalars)
        tokens = try JMESPathLexer.tokenize(scalars)
        self.functions = functions
    }

    /// The tree of the whole expression.
    mutating func parse() throws(JMESPathError) -> JMESPathNode {
        if current.kind == .end {
            throw JMESPathError(.syntax, "the expression is empty; expected an expression", offset: 0)
        }
        let root = try expression(0)
        guard current.kind == .end else {
            throw unexpected(current, expected: "an operator or the end of the expression")
        }
        if let semanticError { throw semanticError }
        return root
    }

    private var current: JMESPathToken { tokens[index] }

    private func lookahead(_ distance: Int) -> JMESPathToken.Kind {
        tokens[min(index + distance, tokens.count - 1)].kind
    }

    @discardableResult
    private mutating func advance() -> JMESPathToken {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    private static func bindingPower(_ kind: JMESPathToken.Kind) -> Int {
        switch kind {
        case .pipe: 1
        case .or: 2
        case .and: 3
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: 5
        case .flatten: 9
        case .star: 20
        case .filter: 21
        case .dot: 40
        case .not: 45
        case .leftBrace: 50
        case .leftBracket: 55
        case .leftParenthesis: 60
        default: 0
        }
    }

    // The functions on the recursive path are kept small, and build error messages in separate functions: a debug
    // build gives each function a stack frame as large as all its locals together, on every level of nesting.

    private mutating func expression(_ rightBindingPower: Int) throws(JMESPathError) -> JMESPathNode {
        depth += 1
        defer { depth -= 1 }
        if depth > JMESPathParser.maximumDepth { throw tooDeep() }
        var left = try nud(advance())
        while rightBindingPower < JMESPathParser.bindingPower(current.kind) {
            if left.height > JMESPathParser.maximumDepth { throw tooDeep() }
            left = try led(advance(), left)
        }
        if left.height > JMESPathParser.maximumDepth { throw tooDeep() }
        return left
    }

    // MARK: Tokens at the start of an expression

    private mutating func nud(_ token: JMESPathToken) throws(JMESPathError) -> JMESPathNode {
        switch token.kind {
        case .literal(let value): return JMESPathNode(.literal(value))
        case .identifier(let name): return JMESPathNode(.field(name))
        case .quotedIdentifier(let name): return try quotedIdentifier(name, token)
        case .current: return JMESPathNode(.current)
        case .star: return try valueProjection(JMESPathNode(.current), JMESPathParser.bindingPower(.star))
        case .filter: return try filter(JMESPathNode(.current))
        case .flatten: return try flatten(JMESPathNode(.current))
        case .leftBrace: return try multiSelectHash()
        case .leftParenthesis: return try parenthesized(token)
        case .not: return JMESPathNode(.not(try expression(JMESPathParser.bindingPower(.not))))
        case .leftBracket: return try bracketAtStart()
        case .expressionReference: return try misplacedExpressionReference(token)
        default: throw unexpected(token, expected: "an expression")
        }
    }

    private mutating func quotedIdentifier(_ name: String, _ token: JMESPathToken) throws(JMESPathError) -> JMESPathNode {
        if current.kind == .leftParenthesis {
            throw JMESPathError(.syntax, "a function name cannot be quoted; expected an unquoted name, as in abs(@)", offset: token.start)
        }
        return JMESPathNode(.field(name))
    }

    private mutating func parenthesized(_ parenthesis: JMESPathToken) throws(JMESPathError) -> JMESPathNode {
        let inner = try expression(0)
        guard current.kind == .rightParenthesis else { throw unclosed(parenthesis) }
        advance()
        return inner
    }

    /// `[` at the start of an expression: an index, a slice, `[*]` or a multi-select list.
    private mutating func bracketAtStart() throws(JMESPathError) -> JMESPathNode {
        switch current.kind {
        case .number, .colon:
            return try indexOrSlice(JMESPathNode(.current))
        case .star where lookahead(1) == .rightBracket:
            advance()
            advance()
            return try listProjection(JMESPathNode(.current))
        default:
            return try multiSelectList()
        }
    }

    private mutating func misplacedExpressionReference(_ ampersand: JMESPathToken) throws(JMESPathError) -> JMESPathNode {
        let referenced = try expression(0)
        report(JMESPathError(.invalidType, "an expression reference ('&') can only be a function argument, as in sort_by(@, &name)", offset: ampersand.start))
        return referenced
    }

    // MARK: Tokens after an expression

    private mutating func led(_ token: JMESPathToken, _ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        switch token.kind {
        case .dot: return try dot(left)
        case .pipe: return JMESPathNode(.pipe(left, try expression(JMESPathParser.bindingPower(.pipe))))
        case .or: return JMESPathNode(.or(left, try expression(JMESPathParser.bindingPower(.or))))
        case .and: return JMESPathNode(.and(left, try expression(JMESPathParser.bindingPower(.and))))
        case .equal: return try comparison(.equal, left)
        case .notEqual: return try comparison(.notEqual, left)
        case .less: return try comparison(.less, left)
        case .lessOrEqual: return try comparison(.lessOrEqual, left)
        case .greater: return try comparison(.greater, left)
        case .greaterOrEqual: return try comparison(.greaterOrEqual, left)
        case .flatten: return try flatten(left)
        case .filter: return try filter(left)
        case .leftBracket: return try bracket(after: left)
        case .leftParenthesis: return try functionCall(left, parenthesis: token)
        // `*`, `!` and `{` bind but cannot follow an expression.
        default: throw unexpected(token, expected: "an operator or the end of the expression")
        }
    }

    private mutating func dot(_ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        if current.kind == .star {
            advance()
            return try valueProjection(left, JMESPathParser.bindingPower(.dot))
        }
        return JMESPathNode(.subexpression(left, try dotRightHandSide(JMESPathParser.bindingPower(.dot))))
    }

    /// `[` after an expression: an index, a slice or `[*]`.
    private mutating func bracket(after left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        switch current.kind {
        case .number, .colon:
            return try indexOrSlice(left)
        case .star where lookahead(1) == .rightBracket:
            advance()
            advance()
            return try listProjection(left)
        case .star:
            advance()
            throw unexpected(current, expected: "']'", after: "'[*'")
        default:
            throw unexpected(current, expected: "an index, a slice or '*'", after: "'['")
        }
    }

    private mutating func comparison(_ comparator: JMESPathNode.Comparator, _ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        JMESPathNode(.comparison(comparator, left, try expression(JMESPathParser.bindingPower(.equal))))
    }

    private mutating func valueProjection(_ left: JMESPathNode, _ bindingPower: Int) throws(JMESPathError) -> JMESPathNode {
        JMESPathNode(.valueProjection(left, try projectionRightHandSide(bindingPower)))
    }

    private mutating func listProjection(_ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        JMESPathNode(.projection(left, try projectionRightHandSide(JMESPathParser.bindingPower(.star))))
    }

    private mutating func flatten(_ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        JMESPathNode(.projection(JMESPathNode(.flatten(left)), try projectionRightHandSide(JMESPathParser.bindingPower(.flatten))))
    }

    private mutating func filter(_ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        let condition = try expression(0)
        guard current.kind == .rightBracket else { throw unexpected(current, expected: "']' to close the filter") }
        advance()
        return JMESPathNode(.filterProjection(left, condition: condition, try projectionRightHandSide(JMESPathParser.bindingPower(.filter))))
    }

    /// After `[` when a number or `:` follows: `[3]`, or a slice, which starts a projection.
    private mutating func indexOrSlice(_ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        if case .number(let value) = current.kind, lookahead(1) != .colon {
            advance()
            guard current.kind == .rightBracket else { throw unexpected(current, expected: "']' after the index") }
            advance()
            return JMESPathNode(.subexpression(left, JMESPathNode(.index(value))))
        }
        let slice = try sliceBounds()
        return JMESPathNode(.projection(JMESPathNode(.subexpression(left, slice)), try projectionRightHandSide(JMESPathParser.bindingPower(.star))))
    }

    /// `start:stop:step`, each part optional, and the closing `]`.
    private mutating func sliceBounds() throws(JMESPathError) -> JMESPathNode {
        var parts: [Int?] = [nil, nil, nil]
        var part = 0
        var stepZero: JMESPathToken?
        while current.kind != .rightBracket {
            switch current.kind {
            case .colon where part < 2:
                part += 1
            case .number(let value) where parts[part] == nil:
                if part == 2 && value == 0 { stepZero = current }
                parts[part] = value
            default:
                let expected = part < 2 ? "a number, ':' or ']'" : "a number or ']'"
                throw unexpected(current, expected: expected, after: parts[part] == nil ? "':' in the slice" : "the number in the slice")
            }
            advance()
        }
        advance()
        if let stepZero {
            report(JMESPathError(.invalidValue, "a slice step cannot be 0; expected a positive or negative step", offset: stepZero.start))
        }
        return JMESPathNode(.slice(start: parts[0], stop: parts[1], step: parts[2]))
    }

    /// What follows a projection (`[*]`, `*`, `[]`, `[?…]`, a slice): it applies to each element.
    private mutating func projectionRightHandSide(_ bindingPower: Int) throws(JMESPathError) -> JMESPathNode {
        switch current.kind {
        case let kind where JMESPathParser.bindingPower(kind) < JMESPathParser.projectionStop:
            return JMESPathNode(.current)
        case .leftBracket, .filter:
            return try expression(bindingPower)
        case .dot:
            advance()
            return try dotRightHandSide(bindingPower)
        default:
            throw unexpected(current, expected: "'.', '[', '[?' or the end of the expression", after: "the projection")
        }
    }

    /// What may follow a `.`: an identifier, `*`, a multi-select list or hash, or a function call.
    private mutating func dotRightHandSide(_ bindingPower: Int) throws(JMESPathError) -> JMESPathNode {
        switch current.kind {
        case .identifier, .quotedIdentifier, .star:
            return try expression(bindingPower)
        case .leftBracket:
            advance()
            return try multiSelectList()
        case .leftBrace:
            advance()
            return try multiSelectHash()
        default:
            throw unexpected(current, expected: "an identifier, '*', '[' or '{'", after: "'.'")
        }
    }

    /// `[a, b, …]` after its `[`.
    private mutating func multiSelectList() throws(JMESPathError) -> JMESPathNode {
        var elements: [JMESPathNode] = []
        while true {
            elements.append(try expression(0))
            if current.kind == .rightBracket { break }
            guard current.kind == .comma else { throw unexpected(current, expected: "',' or ']' in the list") }
            advance()
        }
        advance()
        return JMESPathNode(.multiSelectList(elements))
    }

    /// `{key: value, …}` after its `{`.
    private mutating func multiSelectHash() throws(JMESPathError) -> JMESPathNode {
        var pairs: [(key: String, value: JMESPathNode)] = []
        while true {
            pairs.append((try hashKey(first: pairs.isEmpty), try expression(0)))
            if current.kind == .rightBrace { break }
            guard current.kind == .comma else { throw unexpected(current, expected: "',' or '}' after the value") }
            advance()
        }
        advance()
        return JMESPathNode(.multiSelectHash(pairs))
    }

    /// A key of a multi-select hash and the `:` after it.
    private mutating func hashKey(first: Bool) throws(JMESPathError) -> String {
        let key: String
        switch current.kind {
        case .identifier(let name), .quotedIdentifier(let name): key = name
        default: throw unexpected(current, expected: "a key (an identifier)", after: first ? "'{'" : "','")
        }
        advance()
        guard current.kind == .colon else { throw unexpected(current, expected: "':' after the key") }
        advance()
        return key
    }

    /// `name(arguments…)` after its `(`, checked against the function table.
    private mutating func functionCall(_ left: JMESPathNode, parenthesis: JMESPathToken) throws(JMESPathError) -> JMESPathNode {
        let nameToken = tokens[index - 2]
        guard case .field(let name) = left.kind, case .identifier = nameToken.kind else {
            throw unexpected(parenthesis, expected: "an operator or the end of the expression (only a function name can precede '(')")
        }
        var arguments: [JMESPathNode] = []
        if current.kind != .rightParenthesis {
            while true {
                arguments.append(try argument())
                if current.kind == .rightParenthesis { break }
                guard current.kind == .comma else { throw unexpectedInArguments(of: name) }
                advance()
            }
        }
        advance()
        return resolve(name, arguments, offset: nameToken.start)
    }

    /// The call of `name`, or a stand-in for it after reporting why the function table refuses it.
    private mutating func resolve(_ name: String, _ arguments: [JMESPathNode], offset: Int) -> JMESPathNode {
        guard let function = functions[name] else {
            report(JMESPathError(.unknownFunction, "unknown function \(name)()", offset: offset))
            return JMESPathNode(.multiSelectList(arguments))
        }
        do {
            try function.check(argumentNodes: arguments, offset: offset)
        } catch {
            report(error)
        }
        return JMESPathNode(.function(function, arguments, offset: offset))
    }

    /// One function argument: an expression, or `&expression`, which only arguments may be.
    private mutating func argument() throws(JMESPathError) -> JMESPathNode {
        guard current.kind == .expressionReference else { return try expression(0) }
        let start = advance().end
        let referenced = try expression(0)
        return expressionReference(referenced, from: start, to: current.start)
    }

    private func expressionReference(_ referenced: JMESPathNode, from start: Int, to end: Int) -> JMESPathNode {
        let text = String(String.UnicodeScalarView(scalars[start..<end])).trimmingWhitespace()
        return JMESPathNode(.expressionReference(JMESPathExpression(source: text, root: referenced)))
    }

    // MARK: Errors

    private mutating func report(_ error: JMESPathError) {
        if semanticError == nil { semanticError = error }
    }

    private func unexpected(_ token: JMESPathToken, expected: String, after context: String? = nil) -> JMESPathError {
        if token.kind == .end && context == nil && expected == "an expression" {
            return JMESPathError(.syntax, "the expression ends too soon; expected an expression", offset: token.start)
        }
        let found = token.kind == .end ? "the end of the expression" : "'\(text(of: token))'"
        let place = context.map { " after \($0)" } ?? ""
        return JMESPathError(.syntax, "expected \(expected)\(place), found \(found)", offset: token.start)
    }

    private func unclosed(_ parenthesis: JMESPathToken) -> JMESPathError {
        unexpected(current, expected: "')' to close the '(' at position \(parenthesis.start)")
    }

    private func tooDeep() -> JMESPathError {
        JMESPathError(.syntax, "the expression nests deeper than \(JMESPathParser.maximumDepth) levels; expected a simpler expression", offset: current.start)
    }

    private func unexpectedInArguments(of name: String) -> JMESPathError {
        unexpected(current, expected: "',' or ')' in the arguments of \(name)()")
    }

    private func text(of token: JMESPathToken) -> String {
        String(String.UnicodeScalarView(scalars[token.start..<token.end]))
    }
}

extension String {
    /// The string without the JMESPath whitespace (space, tab, newline, carriage return) at either end.
    fileprivate func trimmingWhitespace() -> String {
        let isWhitespace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        let view = unicodeScalars.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed()
        return String(String.UnicodeScalarView(view))
    }
}
