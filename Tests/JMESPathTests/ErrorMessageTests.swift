import JMESPath
import Testing

/// Errors say where (in Unicode scalars from the start of the expression), what was wrong and what was expected,
/// and have the kind the specification gives them.
@Suite struct ErrorMessageTests {
    struct Expected: Sendable, CustomTestStringConvertible {
        var expression: String
        var kind: JMESPathError.Kind
        var description: String
        var testDescription: String { expression.debugDescription }
    }

    static let compileErrors: [Expected] = [
        Expected(expression: "abc[0 foo]", kind: .syntax, description: "position 6: expected ']' after the index, found 'foo'"),
        Expected(expression: "foo#", kind: .syntax, description: "position 3: unexpected character '#'"),
        Expected(expression: "foo\u{0}", kind: .syntax, description: "position 3: unexpected character U+0000"),
        // Positions count scalars: the emoji is one, whatever its UTF-8 or UTF-16 length.
        Expected(expression: "\"😀\" | #", kind: .syntax, description: "position 6: unexpected character '#'"),
        Expected(expression: "", kind: .syntax, description: "position 0: the expression is empty; expected an expression"),
        Expected(
            expression: "foo.", kind: .syntax,
            description: "position 4: expected an identifier, '*', '[' or '{' after '.', found the end of the expression"),
        Expected(expression: "'abc", kind: .syntax, description: "position 0: the raw string starting here is never closed; expected a ' to end it"),
        Expected(expression: "{a: b, }", kind: .syntax, description: "position 7: expected a key (an identifier) after ',', found '}'"),
        Expected(
            expression: "foo | (bar", kind: .syntax,
            description: "position 10: expected ')' to close the '(' at position 6, found the end of the expression"),
        Expected(expression: "foo[*]bar", kind: .syntax, description: "position 6: expected an operator or the end of the expression, found 'bar'"),
        Expected(expression: "a = b", kind: .syntax, description: "position 2: unexpected '='; expected '==' (a single '=' is not an operator)"),
        Expected(
            expression: "a.\"b\"(c)", kind: .syntax, description: "position 2: a function name cannot be quoted; expected an unquoted name, as in abs(@)"),
        Expected(expression: "length(@) > nope(@)", kind: .unknownFunction, description: "position 12: unknown function nope()"),
        Expected(expression: "abs(@, @)", kind: .invalidArity, description: "position 0: abs() takes 1 argument, given 2"),
        Expected(expression: "a | not_null()", kind: .invalidArity, description: "position 4: not_null() takes at least 1 argument, given 0"),
        Expected(
            expression: "sort_by(@, name)", kind: .invalidType,
            description: "position 0: argument 2 of sort_by() must be an expression reference, as in &name"),
        Expected(
            expression: "&foo", kind: .invalidType,
            description: "position 0: an expression reference ('&') can only be a function argument, as in sort_by(@, &name)"),
        Expected(expression: "[::0]", kind: .invalidValue, description: "position 3: a slice step cannot be 0; expected a positive or negative step"),
        // A syntax error anywhere wins over an unknown function before it.
        Expected(expression: "nope(@) | [", kind: .syntax, description: "position 11: the expression ends too soon; expected an expression"),
    ]

    @Test(arguments: compileErrors) func compileError(_ expected: Expected) {
        #expect {
            _ = try JMESPathExpression(compiling: expected.expression)
        } throws: { error in
            guard let error = error as? JMESPathError else { return false }
            #expect(error.kind == expected.kind)
            #expect(error.description == expected.description)
            return true
        }
    }

    @Test func evaluationErrorsCarryTheOffsetOfTheCall() throws {
        let expression = try JMESPathExpression(compiling: "a.abs(b)")
        #expect {
            _ = try expression.evaluate(["a": ["b": "x"]])
        } throws: { error in
            (error as? JMESPathError)?.description == "position 2: argument 1 of abs() must be a number, given a string (\"x\")"
        }
        let sort = try JMESPathExpression(compiling: "sort_by(@, &a)")
        #expect {
            _ = try sort.evaluate([["a": 1], ["a": "x"], [:]])
        } throws: { error in
            (error as? JMESPathError)?.description
                == "position 0: sort_by() needs &a to give all numbers or all strings; it gave number, string, null"
        }
    }
}
