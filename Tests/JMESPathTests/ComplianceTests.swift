import Foundation
import JMESPath
import Testing

/// The official JMESPath compliance suite (jmespath/jmespath.test, in `Compliance/`): every case of every file.
/// A `result` case must evaluate to exactly that value; an `error` case must fail, at compile or evaluation time,
/// with that kind of error.
@Suite struct ComplianceTests {
    /// The suite's files, all but the benchmarks (which have no expected results).
    static let files = [
        "basic", "boolean", "current", "escape", "filters", "functions", "identifiers", "indices", "literal", "multiselect",
        "pipe", "slice", "syntax", "unicode", "wildcard",
    ]

    /// One case: its data, expression, and either the result or the name of the error kind expected.
    struct Case {
        var given: JSONValue
        var expression: String
        var result: JSONValue?
        var error: String?
    }

    static func cases(in file: String) throws -> [Case] {
        let url = try #require(Bundle.module.url(forResource: file, withExtension: "json", subdirectory: "Compliance"))
        guard case .array(let suites) = try JSONValue(jsonData: Data(contentsOf: url)) else {
            Issue.record("\(file).json is not an array of suites")
            return []
        }
        var cases: [Case] = []
        for case .object(let suite) in suites {
            guard case .array(let suiteCases)? = suite["cases"] else { continue }
            for case .object(let fields) in suiteCases {
                guard case .string(let expression)? = fields["expression"] else { continue }
                var error: String?
                if case .string(let kind)? = fields["error"] { error = kind }
                cases.append(Case(given: suite["given"] ?? .null, expression: expression, result: fields["result"], error: error))
            }
        }
        return cases
    }

    @Test(arguments: files) func compliance(file: String) throws {
        let cases = try Self.cases(in: file)
        #expect(!cases.isEmpty)
        var passed = 0
        for testCase in cases {
            let outcome: Result<JSONValue, JMESPathError>
            do {
                outcome = .success(try JMESPathExpression(compiling: testCase.expression).evaluate(testCase.given))
            } catch {
                outcome = .failure(error)
            }
            switch (outcome, testCase.result, testCase.error) {
            case (.success(let actual), let expected?, nil):
                #expect(actual == expected, "\(file).json: \(testCase.expression) gave \(actual), expected \(expected)")
                if actual == expected { passed += 1 }
            case (.failure(let error), nil, let expectedKind?):
                #expect(error.kind.rawValue == expectedKind, "\(file).json: \(testCase.expression) failed with \(error.kind): \(error)")
                if error.kind.rawValue == expectedKind { passed += 1 }
            case (.success(let actual), nil, let expectedKind?):
                Issue.record("\(file).json: \(testCase.expression) gave \(actual), expected a \(expectedKind) error")
            case (.failure(let error), let expected?, nil):
                Issue.record("\(file).json: \(testCase.expression) failed (\(error.kind): \(error)), expected \(expected)")
            default:
                Issue.record("\(file).json: \(testCase.expression) has neither a result nor an error")
            }
        }
        print("compliance \(file).json: \(passed) of \(cases.count) cases pass")
    }
}
