import Foundation
import JMESPath
import Testing

/// Random expressions on random data, evaluated here and by Python's `jmespath` package (the reference
/// implementation), must agree: equal results (numbers within 1e-9, objects in any order) or the same kind of error.
///
/// Cases where jmespath.py departs from the specification (its driver in ``PythonJMESPath`` lists each departure)
/// are compared with a corrected Python instead and reported apart; so are calls this implementation refuses at
/// compile time (unknown function, wrong arity, misplaced expression reference) where Python only fails if the call
/// is reached.
@Suite struct DifferentialTests {
    /// 3,000, or `JMESPATH_DIFFERENTIAL_CASES` from the environment for a longer search.
    static let caseCount = Int(ProcessInfo.processInfo.environment["JMESPATH_DIFFERENTIAL_CASES"] ?? "") ?? 3_000
    /// A fixed seed, or `JMESPATH_DIFFERENTIAL_SEED` from the environment for other cases.
    static let seed = UInt64(ProcessInfo.processInfo.environment["JMESPATH_DIFFERENTIAL_SEED"] ?? "") ?? 0x4A4D_4553_5041_5448

    /// What this implementation did with a case.
    enum Outcome {
        case result(JSONValue)
        case error(JMESPathError, atCompileTime: Bool)

        init(expression: String, data: JSONValue) {
            let compiled: JMESPathExpression
            do {
                compiled = try JMESPathExpression(compiling: expression)
            } catch {
                self = .error(error, atCompileTime: true)
                return
            }
            do {
                self = .result(try compiled.evaluate(data))
            } catch {
                self = .error(error, atCompileTime: false)
            }
        }

        /// Whether this is the outcome the driver wrote as `{"result": value}` or `{"error": kind}`.
        func matches(_ python: JSONValue?) -> Bool {
            guard case .object(let fields)? = python else { return false }
            switch self {
            case .result(let value): return fields["result"].map { DifferentialTests.same(value, $0) } ?? false
            case .error(let error, _): return fields["error"] == .string(error.kind.rawValue)
            }
        }
    }

    @Test func agreesWithPythonJMESPath() async throws {
        let python: String
        let version: String
        do {
            python = try PythonJMESPath.locate()
            version = try await PythonJMESPath.version(of: python)
        } catch {
            Issue.record("\(error)")
            return
        }
        var generator = RandomCaseGenerator(seed: Self.seed)
        let cases = (0..<Self.caseCount).map { _ in (expression: generator.expression(), data: generator.data()) }
        let outcomes = try await PythonJMESPath.evaluate(cases, python: python)
        try #require(outcomes.count == cases.count, "the Python driver wrote \(outcomes.count) outcomes for \(cases.count) cases")

        var agreed = 0
        var agreedValue = 0
        var agreedNull = 0
        var agreedError = 0
        var excluded: [String: Int] = [:]
        var excludedCases = 0
        var excludedAgreeing = 0
        var checkedAtCompileTime = 0
        var disagreements: [String] = []
        for (testCase, python) in zip(cases, outcomes) {
            let swift = Outcome(expression: testCase.expression, data: testCase.data)
            // Where jmespath.py departs from the specification, the corrected outcome is the one to agree with.
            var expected = python.member("reference")
            if case .array(let deviations)? = python.member("deviations") {
                excludedCases += 1
                for case .string(let name) in deviations { excluded[name, default: 0] += 1 }
                expected = python.member("spec")
            }
            if swift.matches(expected) {
                if expected != python.member("reference") {
                    excludedAgreeing += 1
                    continue
                }
                agreed += 1
                switch swift {
                case .result(.null): agreedNull += 1
                case .result: agreedValue += 1
                case .error: agreedError += 1
                }
            } else if case .error(let error, atCompileTime: true) = swift, error.kind != .syntax, expected?.member("error") != .string("syntax") {
                checkedAtCompileTime += 1
            } else {
                disagreements.append("\(testCase.expression) on \(testCase.data): Swift \(swift), Python \(python)")
            }
        }
        let deviations = excluded.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print(
            "differential: \(cases.count) cases against jmespath.py \(version): \(agreed) agreed "
                + "(\(agreedValue) non-null results, \(agreedNull) null, \(agreedError) errors); \(excludedCases) where jmespath.py "
                + "departs from the spec (\(deviations.isEmpty ? "none" : deviations)), of which \(excludedAgreeing) agreed with it corrected; "
                + "\(checkedAtCompileTime) refused at compile time; \(disagreements.count) disagreed"
        )
        for disagreement in disagreements.prefix(25) { Issue.record("\(disagreement)") }
        #expect(disagreements.isEmpty, "\(disagreements.count) of \(cases.count) cases disagree with jmespath.py")
    }

    /// JSON equality with numbers within 1e-9 (relative, for large ones).
    static func same(_ left: JSONValue, _ right: JSONValue) -> Bool {
        switch (left, right) {
        case (.number(let left), .number(let right)):
            return abs(left - right) <= 1e-9 * max(1, abs(left), abs(right))
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { same($0, $1) }
        case (.object(let left), .object(let right)):
            return left.count == right.count && left.allSatisfy { key, value in right[key].map { same(value, $0) } ?? false }
        default:
            return left == right
        }
    }
}

extension JSONValue {
    /// The member `key` of an object; nil for a missing key or a value that is not an object.
    fileprivate func member(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }
}
