/// Parses a JMESPath expression into a syntax tree by top-down operator precedence (Pratt), with the binding powers of
/// the reference implementation, resolving function calls against a function table as it goes.
struct JMESPathParser {
    /// How deep an expression may nest, in parser recursion and in tree height; deeper ones are refused.
    static let maximumDepth = 256

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
        tokens = try JMESPathLexer.tokenize(source)
        self.functions = functions
    }

    /// The tree of the whole expression.
    mutating func parse() throws(JMESPathError) -> JMESPathNode {
        if current.kind == .end {
            throw JMESPathError(.syntax, "the expression is empty; expected an expression", offset: 0)
        }
        let root = try expression(0)
        guard current.kind == .end else {
            throw error(expected: "an operator or the end of the expression", after: "the expression", at: current)
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

    private mutating func expression(_ rightBindingPower: Int) throws(JMESPathError) -> JMESPathNode {
        depth += 1
        defer { depth -= 1 }
        if depth > JMESPathParser.maximumDepth { throw tooDeep(at: current) }
        var left = try nud(advance())
        if left.height > JMESPathParser.maximumDepth { throw tooDeep(at: current) }
        while rightBindingPower < JMESPathParser.bindingPower(current.kind) {
            left = try led(advance(), left)
            if left.height > JMESPathParser.maximumDepth { throw tooDeep(at: current) }
        }
        return left
    }

    // MARK: Tokens at the start of an expression

    private mutating func nud(_ token: JMESPathToken) throws(JMESPathError) -> JMESPathNode {
        switch token.kind {
        case .literal(let value):
            return JMESPathNode(.literal(value))
        case .identifier(let name):
            return JMESPathNode(.field(name))
        case .quotedIdentifier(let name):
            if current.kind == .leftParenthesis {
                throw JMESPathError(.syntax, "a function name cannot be quoted; expected an unquoted name, as in abs(@)", offset: token.start)
            }
            return JMESPathNode(.field(name))
        case .current:
            return JMESPathNode(.current)
        case .star:
            return JMESPathNode(.valueProjection(JMESPathNode(.current), try projectionRightHandSide(JMESPathParser.bindingPower(.star))))
        case .filter:
            return try filter(JMESPathNode(.current))
        case .flatten:
            return try flatten(JMESPathNode(.current))
        case .leftBrace:
            return try multiSelectHash()
        case .leftParenthesis:
            let inner = try expression(0)
            try expect(.rightParenthesis, "')' to close the '(' at position \(token.start)")
            return inner
        case .not:
            return JMESPathNode(.not(try expression(JMESPathParser.bindingPower(.not))))
        case .leftBracket:
            switch current.kind {
            case .number, .colon:
                return try indexOrSlice(JMESPathNode(.current))
            case .star where lookahead(1) == .rightBracket:
                advance()
                advance()
                return JMESPathNode(.projection(JMESPathNode(.current), try projectionRightHandSide(JMESPathParser.bindingPower(.star))))
            default:
                return try multiSelectList()
            }
        case .expressionReference:
            let referenced = try expression(0)
            report(JMESPathError(.invalidType, "an expression reference ('&') can only be a function argument, as in sort_by(@, &name)", offset: token.start))
            return referenced
        case .end:
            throw JMESPathError(.syntax, "the expression ends too soon; expected an expression", offset: token.start)
        default:
            throw error(expected: "an expression", at: token)
        }
    }

    // MARK: Tokens after an expression

    private mutating func led(_ token: JMESPathToken, _ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        switch token.kind {
        case .dot:
            if current.kind == .star {
                advance()
                return JMESPathNode(.valueProjection(left, try projectionRightHandSide(JMESPathParser.bindingPower(.dot))))
            }
            return JMESPathNode(.subexpression(left, try dotRightHandSide(JMESPathParser.bindingPower(.dot), after: token)))
        case .pipe:
            return JMESPathNode(.pipe(left, try expression(JMESPathParser.bindingPower(.pipe))))
        case .or:
            return JMESPathNode(.or(left, try expression(JMESPathParser.bindingPower(.or))))
        case .and:
            return JMESPathNode(.and(left, try expression(JMESPathParser.bindingPower(.and))))
        case .equal: return try comparison(.equal, left, token)
        case .notEqual: return try comparison(.notEqual, left, token)
        case .less: return try comparison(.less, left, token)
        case .lessOrEqual: return try comparison(.lessOrEqual, left, token)
        case .greater: return try comparison(.greater, left, token)
        case .greaterOrEqual: return try comparison(.greaterOrEqual, left, token)
        case .flatten:
            return try flatten(left)
        case .filter:
            return try filter(left)
        case .leftBracket:
            switch current.kind {
            case .number, .colon:
                return try indexOrSlice(left)
            case .star:
                advance()
                try expect(.rightBracket, "']' after '[*'")
                return JMESPathNode(.projection(left, try projectionRightHandSide(JMESPathParser.bindingPower(.star))))
            default:
                throw error(expected: "an index, a slice or '*'", after: "'['", at: current)
            }
        case .leftParenthesis:
            return try functionCall(left, parenthesis: token)
        default:
            // `*`, `!` and `{` bind but cannot follow an expression.
            throw error(expected: "an operator or the end of the expression", at: token)
        }
    }

    private mutating func comparison(_ comparator: JMESPathNode.Comparator, _ left: JMESPathNode, _ token: JMESPathToken)
        throws(JMESPathError) -> JMESPathNode
    {
        JMESPathNode(.comparison(comparator, left, try expression(JMESPathParser.bindingPower(token.kind))))
    }

    private mutating func flatten(_ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        JMESPathNode(.projection(JMESPathNode(.flatten(left)), try projectionRightHandSide(JMESPathParser.bindingPower(.flatten))))
    }

    private mutating func filter(_ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        let condition = try expression(0)
        try expect(.rightBracket, "']' to close the filter")
        return JMESPathNode(.filterProjection(left, condition: condition, try projectionRightHandSide(JMESPathParser.bindingPower(.filter))))
    }

    /// After `[` when a number or `:` follows: `[3]`, or a slice, which starts a projection.
    private mutating func indexOrSlice(_ left: JMESPathNode) throws(JMESPathError) -> JMESPathNode {
        if case .number(let value) = current.kind, lookahead(1) != .colon {
            advance()
            try expect(.rightBracket, "']' after the index")
            return JMESPathNode(.subexpression(left, JMESPathNode(.index(value))))
        }
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
                throw error(expected: expected, after: parts[part] == nil ? "':' in the slice" : "the number in the slice", at: current)
            }
            advance()
        }
        if let stepZero {
            report(JMESPathError(.invalidValue, "a slice step cannot be 0; expected a positive or negative step", offset: stepZero.start))
        }
        advance()
        let slice = JMESPathNode(.slice(start: parts[0], stop: parts[1], step: parts[2]))
        return JMESPathNode(.projection(JMESPathNode(.subexpression(left, slice)), try projectionRightHandSide(JMESPathParser.bindingPower(.star))))
    }

    /// What follows a projection (`[*]`, `*`, `[]`, `[?…]`, a slice): it applies to each element.
    private mutating func projectionRightHandSide(_ bindingPower: Int) throws(JMESPathError) -> JMESPathNode {
        switch current.kind {
        case let kind where JMESPathParser.bindingPower(kind) < JMESPathParser.projectionStop:
            return JMESPathNode(.current)
        case .leftBracket, .filter:
            return try expression(bindingPower)
        case .dot:
            let dot = advance()
            return try dotRightHandSide(bindingPower, after: dot)
        default:
            throw error(expected: "'.', '[', '[?' or the end of the expression", after: "the projection", at: current)
        }
    }

    /// What may follow a `.`: an identifier, `*`, a multi-select list or hash, or a function call.
    private mutating func dotRightHandSide(_ bindingPower: Int, after dot: JMESPathToken) throws(JMESPathError) -> JMESPathNode {
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
            throw error(expected: "an identifier, '*', '[' or '{'", after: "'.'", at: current)
        }
    }

    /// `[a, b, …]` after its `[`.
    private mutating func multiSelectList() throws(JMESPathError) -> JMESPathNode {
        var elements: [JMESPathNode] = []
        while true {
            elements.append(try expression(0))
            if current.kind == .rightBracket { break }
            try expect(.comma, "',' or ']' in the list")
        }
        advance()
        return JMESPathNode(.multiSelectList(elements))
    }

    /// `{key: value, …}` after its `{`.
    private mutating func multiSelectHash() throws(JMESPathError) -> JMESPathNode {
        var pairs: [(key: String, value: JMESPathNode)] = []
        while true {
            let key: String
            switch current.kind {
            case .identifier(let name), .quotedIdentifier(let name): key = name
            default: throw error(expected: "a key (an identifier)", after: pairs.isEmpty ? "'{'" : "','", at: current)
            }
            advance()
            try expect(.colon, "':' after the key")
            pairs.append((key, try expression(0)))
            if current.kind == .rightBrace { break }
            try expect(.comma, "',' or '}' after the value")
        }
        advance()
        return JMESPathNode(.multiSelectHash(pairs))
    }

    /// `name(arguments…)` after its `(`, checked against the function table.
    private mutating func functionCall(_ left: JMESPathNode, parenthesis: JMESPathToken) throws(JMESPathError) -> JMESPathNode {
        let nameToken = tokens[index - 2]
        guard case .field(let name) = left.kind, case .identifier = nameToken.kind else {
            throw error(expected: "an operator or the end of the expression", after: "the expression", at: parenthesis)
        }
        var arguments: [JMESPathNode] = []
        if current.kind != .rightParenthesis {
            while true {
                arguments.append(try argument())
                if current.kind == .rightParenthesis { break }
                try expect(.comma, "',' or ')' in the arguments of \(name)()")
            }
        }
        advance()
        guard let function = functions[name] else {
            report(JMESPathError(.unknownFunction, "unknown function \(name)()", offset: nameToken.start))
            return JMESPathNode(.multiSelectList(arguments))
        }
        do {
            try function.check(argumentNodes: arguments, offset: nameToken.start)
        } catch {
            report(error)
        }
        return JMESPathNode(.function(function, arguments, offset: nameToken.start))
    }

    /// One function argument: an expression, or `&expression`, which only arguments may be.
    private mutating func argument() throws(JMESPathError) -> JMESPathNode {
        guard current.kind == .expressionReference else { return try expression(0) }
        let ampersand = advance()
        let referenced = try expression(0)
        let text = String(String.UnicodeScalarView(scalars[ampersand.end..<current.start])).trimmingWhitespace()
        return JMESPathNode(.expressionReference(JMESPathExpression(source: text, root: referenced)))
    }

    private mutating func expect(_ kind: JMESPathToken.Kind, _ expected: String) throws(JMESPathError) {
        guard current.kind == kind else { throw error(expected: expected, at: current) }
        advance()
    }

    // MARK: Errors

    private mutating func report(_ error: JMESPathError) {
        if semanticError == nil { semanticError = error }
    }

    private func error(expected: String, after context: String? = nil, at token: JMESPathToken) -> JMESPathError {
        let found = token.kind == .end ? "the end of the expression" : "'\(text(of: token))'"
        let place = context.map { " after \($0)" } ?? ""
        return JMESPathError(.syntax, "expected \(expected)\(place), found \(found)", offset: token.start)
    }

    private func tooDeep(at token: JMESPathToken) -> JMESPathError {
        JMESPathError(.syntax, "the expression nests deeper than \(JMESPathParser.maximumDepth) levels; expected a simpler expression", offset: token.start)
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
