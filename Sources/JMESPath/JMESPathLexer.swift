import Foundation

/// One token of a JMESPath expression, with where it starts and ends in the expression (in Unicode scalars).
struct JMESPathToken: Sendable {
    /// What the token is, with its value where it has one.
    enum Kind: Sendable, Equatable {
        case identifier(String)
        case quotedIdentifier(String)
        case number(Int)
        /// A JSON literal in backticks or a raw string literal in single quotes.
        case literal(JSONValue)
        case dot, star, comma, colon, current, expressionReference
        case leftBracket, rightBracket, flatten, filter
        case leftBrace, rightBrace, leftParenthesis, rightParenthesis
        case pipe, or, and, not
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
        case end
    }

    var kind: Kind
    /// The offset of the token's first scalar.
    var start: Int
    /// The offset just past the token's last scalar.
    var end: Int
}

/// Splits a JMESPath expression into tokens, following the lexical rules of the specification and of the compliance
/// suite (including its legacy JSON literals: backtick text that is not JSON is taken as a string).
struct JMESPathLexer {
    private let scalars: [Unicode.Scalar]
    private var position = 0

    private init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    /// All the tokens of the expression, ending with one `.end` token.
    static func tokenize(_ scalars: [Unicode.Scalar]) throws(JMESPathError) -> [JMESPathToken] {
        var lexer = JMESPathLexer(scalars)
        var tokens: [JMESPathToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private var current: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    private func peek(_ distance: Int) -> Unicode.Scalar? {
        position + distance < scalars.count ? scalars[position + distance] : nil
    }

    private mutating func next() throws(JMESPathError) -> JMESPathToken {
        while let scalar = current, scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" {
            position += 1
        }
        let start = position
        guard let scalar = current else { return JMESPathToken(kind: .end, start: start, end: start) }
        let kind: JMESPathToken.Kind
        switch scalar {
        case ".": kind = single(.dot)
        case "*": kind = single(.star)
        case ",": kind = single(.comma)
        case ":": kind = single(.colon)
        case "@": kind = single(.current)
        case "]": kind = single(.rightBracket)
        case "{": kind = single(.leftBrace)
        case "}": kind = single(.rightBrace)
        case "(": kind = single(.leftParenthesis)
        case ")": kind = single(.rightParenthesis)
        case "[":
            switch peek(1) {
            case "]": kind = double(.flatten)
            case "?": kind = double(.filter)
            default: kind = single(.leftBracket)
            }
        case "|": kind = peek(1) == "|" ? double(.or) : single(.pipe)
        case "&": kind = peek(1) == "&" ? double(.and) : single(.expressionReference)
        case "<": kind = peek(1) == "=" ? double(.lessOrEqual) : single(.less)
        case ">": kind = peek(1) == "=" ? double(.greaterOrEqual) : single(.greater)
        case "!": kind = peek(1) == "=" ? double(.notEqual) : single(.not)
        case "=":
            guard peek(1) == "=" else {
                throw JMESPathError(.syntax, "unexpected '='; expected '==' (a single '=' is not an operator)", offset: start)
            }
            kind = double(.equal)
        case "a"..."z", "A"..."Z", "_":
            kind = .identifier(consumeIdentifier())
        case "0"..."9", "-":
            kind = .number(try consumeNumber())
        case "\"":
            kind = .quotedIdentifier(try consumeQuotedIdentifier())
        case "'":
            kind = .literal(.string(try consumeRawString()))
        case "`":
            kind = .literal(try consumeJSONLiteral())
        default:
            throw JMESPathError(.syntax, "unexpected character \(JMESPathLexer.describe(scalar))", offset: start)
        }
        return JMESPathToken(kind: kind, start: start, end: position)
    }

    private mutating func single(_ kind: JMESPathToken.Kind) -> JMESPathToken.Kind {
        position += 1
        return kind
    }

    private mutating func double(_ kind: JMESPathToken.Kind) -> JMESPathToken.Kind {
        position += 2
        return kind
    }

    private mutating func consumeIdentifier() -> String {
        var name = String.UnicodeScalarView()
        while let scalar = current, JMESPathLexer.isIdentifierScalar(scalar) {
            name.append(scalar)
            position += 1
        }
        return String(name)
    }

    private static func isIdentifierScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_": true
        default: false
        }
    }

    private mutating func consumeNumber() throws(JMESPathError) -> Int {
        let start = position
        var digits = ""
        if current == "-" {
            digits = "-"
            position += 1
        }
        while let scalar = current, ("0"..."9").contains(scalar) {
            digits.unicodeScalars.append(scalar)
            position += 1
        }
        guard digits != "-" else {
            throw JMESPathError(.syntax, "expected digits after '-' (a negative number)", offset: start)
        }
        // A number too large for Int saturates: as an index it is out of range either way, and a slice clamps it.
        return Int(digits) ?? (digits.hasPrefix("-") ? Int.min : Int.max)
    }

    /// The text between `delimiter`s from the current position (which is on the opening one). A backslash keeps the
    /// scalar after it from closing the text; both stay in the text, except that with `unescaping` a backslash before
    /// the delimiter is dropped.
    private mutating func consumeDelimited(_ delimiter: Unicode.Scalar, what: String, unescaping: Bool) throws(JMESPathError) -> String {
        let start = position
        var text = String.UnicodeScalarView()
        position += 1
        while true {
            guard var scalar = current else {
                throw JMESPathError(.syntax, "\(what) is never closed; expected a \(delimiter) to end it", offset: start)
            }
            if scalar == "\\" {
                position += 1
                guard let escaped = current else {
                    throw JMESPathError(.syntax, "\(what) is never closed; expected a \(delimiter) to end it", offset: start)
                }
                if !(unescaping && escaped == delimiter) { text.append(scalar) }
                scalar = escaped
            } else if scalar == delimiter {
                position += 1
                return String(text)
            }
            text.append(scalar)
            position += 1
        }
    }

    private mutating func consumeQuotedIdentifier() throws(JMESPathError) -> String {
        let start = position
        let text = try consumeDelimited("\"", what: "the quoted identifier starting here", unescaping: false)
        guard case .string(let name)? = JMESPathLexer.parseJSON("\"" + text + "\"") else {
            throw JMESPathError(
                .syntax,
                "invalid quoted identifier \"\(text)\"; expected a JSON string (escapes \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX only, no control characters)",
                offset: start)
        }
        return name
    }

    private mutating func consumeRawString() throws(JMESPathError) -> String {
        try consumeDelimited("'", what: "the raw string starting here", unescaping: true)
    }

    private mutating func consumeJSONLiteral() throws(JMESPathError) -> JSONValue {
        let start = position
        let text = try consumeDelimited("`", what: "the JSON literal starting here", unescaping: true)
        let depth = JMESPathLexer.nestingDepth(ofJSON: text)
        if let depth, depth > JMESPathParser.maximumDepth {
            throw JMESPathError(.syntax, "the JSON literal nests deeper than \(JMESPathParser.maximumDepth) levels", offset: start)
        }
        if depth != nil, let value = JMESPathLexer.parseJSON(text) { return value }
        // The compliance suite keeps the deprecated form where backticks around non-JSON text make a string.
        let trimmed = String(String.UnicodeScalarView(text.unicodeScalars.drop(while: { $0.properties.isWhitespace })))
        if let value = JMESPathLexer.parseJSON("\"" + trimmed + "\"") { return value }
        throw JMESPathError(.syntax, "invalid JSON literal `\(text)`; expected a JSON value between the backticks", offset: start)
    }

    private static func parseJSON(_ text: String) -> JSONValue? {
        try? JSONValue(json: text)
    }

    /// How deeply arrays and objects nest in `text`, or nil when it has what JSON forbids but Foundation's parser
    /// accepts: a comma before a closing bracket or brace, or a byte order mark.
    private static func nestingDepth(ofJSON text: String) -> Int? {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        var previous: Unicode.Scalar = " "
        for scalar in text.unicodeScalars {
            if inString {
                if escaped {
                    escaped = false
                } else if scalar == "\\" {
                    escaped = true
                } else if scalar == "\"" {
                    inString = false
                }
                previous = scalar
                continue
            }
            switch scalar {
            case "\"": inString = true
            case "[", "{":
                depth += 1
                deepest = max(deepest, depth)
            case "]", "}":
                if previous == "," { return nil }
                depth -= 1
            case "\u{FEFF}": return nil
            case " ", "\t", "\n", "\r": continue
            default: break
            }
            previous = scalar
        }
        return deepest
    }

    /// A scalar for an error message: `'#'` for printable ASCII, `'é' (U+00E9)` for other visible scalars, and
    /// `U+0000` for the rest (controls, spaces, marks, format and private-use scalars).
    private static func describe(_ scalar: Unicode.Scalar) -> String {
        let code = String(format: "U+%04X", scalar.value)
        if scalar.isASCII { return (0x21..<0x7F).contains(scalar.value) ? "'\(scalar)'" : code }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber, .letterNumber,
            .otherNumber, .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
            .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
            return "'\(scalar)' (\(code))"
        default:
            return code
        }
    }
}
