import JMESPath
import Testing

/// Functions added to a table (as the matchmaking layer adds Apple's Game Center functions) are called with checked
/// arguments, and names not in the table are refused when compiling.
@Suite struct CustomFunctionTests {
    static let functions = JMESPathFunctions.builtIn
        .adding("divide", parameters: [.number, .number]) { arguments throws(JMESPathError) in
            guard case .value(.number(let dividend))? = arguments.first, case .value(.number(let divisor))? = arguments.last else { return nil }
            guard divisor != 0 else { throw JMESPathError(.invalidValue, "divide() by zero") }
            return .number(dividend / divisor)
        }
        .adding("count_if", parameters: [.array, .expression]) { arguments throws(JMESPathError) in
            guard case .value(.array(let elements))? = arguments.first, let condition = arguments.last?.expression else { return nil }
            var count = 0
            for element in elements where try condition.evaluate(element).isTruthy { count += 1 }
            return .number(Double(count))
        }
        .adding("concat", parameters: [.string], isVariadic: true) { arguments throws(JMESPathError) in
            var text = ""
            for case .value(.string(let part)) in arguments { text += part }
            return .string(text)
        }

    static let players: JSONValue = [
        "players": [["name": "Ann", "skill": 30], ["name": "Ben", "skill": 12], ["name": "Cy", "skill": 7]]
    ]

    @Test func customFunctionsAreCalled() throws {
        let half = try JMESPathExpression(compiling: "players[?divide(skill, `2`) > `5`].name", functions: Self.functions)
        #expect(try half.evaluate(Self.players) == ["Ann", "Ben"])
        let strong = try JMESPathExpression(compiling: "count_if(players, &skill >= `10`)", functions: Self.functions)
        #expect(try strong.evaluate(Self.players) == 2)
        let names = try JMESPathExpression(compiling: "concat(players[0].name, ' & ', players[1].name)", functions: Self.functions)
        #expect(try names.evaluate(Self.players) == "Ann & Ben")
    }

    @Test func argumentsAreCheckedBeforeTheBodyRuns() throws {
        #expect {
            _ = try JMESPathExpression(compiling: "divide(`1`)", functions: Self.functions)
        } throws: { error in
            (error as? JMESPathError)?.description == "position 0: divide() takes 2 arguments, given 1"
        }
        #expect {
            _ = try JMESPathExpression(compiling: "count_if(players, skill)", functions: Self.functions)
        } throws: { error in
            (error as? JMESPathError)?.kind == .invalidType
        }
        let byName = try JMESPathExpression(compiling: "players[0] | divide(name, `2`)", functions: Self.functions)
        #expect {
            _ = try byName.evaluate(Self.players)
        } throws: { error in
            (error as? JMESPathError)?.description == "position 13: argument 1 of divide() must be a number, given a string (\"Ann\")"
        }
    }

    @Test func errorsFromTheBodyGetThePositionOfTheCall() throws {
        let expression = try JMESPathExpression(compiling: "players | divide(`1`, `0`)", functions: Self.functions)
        #expect {
            _ = try expression.evaluate(Self.players)
        } throws: { error in
            (error as? JMESPathError).map { $0.kind == .invalidValue && $0.description == "position 10: divide() by zero" } ?? false
        }
    }

    @Test func unknownFunctionsAreRefusedAtCompileTime() throws {
        let source = "players[?divide(skill, `2`) > `5`]"
        #expect {
            _ = try JMESPathExpression(compiling: source)
        } throws: { error in
            (error as? JMESPathError).map { $0.kind == .unknownFunction && $0.description == "position 9: unknown function divide()" } ?? false
        }
        #expect(throws: Never.self) { try JMESPathExpression(compiling: source, functions: Self.functions) }
    }

    @Test func addingReplacesAFunctionOfTheSameName() throws {
        let functions = JMESPathFunctions.builtIn.adding("length", parameters: [.any]) { _ throws(JMESPathError) in 42 }
        #expect(try JMESPathExpression(compiling: "length(`true`)", functions: functions).evaluate(nil) == 42)
        #expect(try JMESPathExpression(compiling: "length('abc')").evaluate(nil) == 3)
    }
}
