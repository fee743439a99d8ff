import Foundation
import JMESPath

/// The reference implementation, Python's `jmespath` package, run in one `python3` process over a file of cases.
enum PythonJMESPath {
    enum Failure: Error, CustomStringConvertible {
        case noPython
        case noPackage(python: String, output: String)
        case driverFailed(status: Int32, output: String)

        var description: String {
            switch self {
            case .noPython: "python3 is not on PATH; the differential test needs it with the jmespath package (pip install jmespath)"
            case .noPackage(let python, let output):
                "\(python) cannot import jmespath; install it with `\(python) -m pip install jmespath`. Python said: \(output)"
            case .driverFailed(let status, let output): "the Python driver exited with status \(status): \(output)"
            }
        }
    }

    /// The first `python3` on `PATH`.
    static func locate() throws(Failure) -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/python3"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw .noPython
    }

    /// The version of the `jmespath` package `python` imports.
    static func version(of python: String) async throws -> String {
        let (status, output) = try await run(python, ["-c", "import jmespath; print(jmespath.__version__)"])
        guard status == 0 else {
            let lastLine = output.split(separator: "\n").last.map(String.init) ?? output
            throw Failure.noPackage(python: python, output: lastLine)
        }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Each case's outcome, as the driver below writes it: `{"reference": OUTCOME}`, plus `"spec"` and
    /// `"deviations"` where correcting jmespath.py's known departures from the specification changes the outcome.
    static func evaluate(_ cases: [(expression: String, data: JSONValue)], python: String) async throws -> [JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jmespath-differential-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let driverURL = directory.appendingPathComponent("driver.py")
        let inputURL = directory.appendingPathComponent("cases.jsonl")
        let outputURL = directory.appendingPathComponent("outcomes.jsonl")
        try driver.write(to: driverURL, atomically: true, encoding: .utf8)
        let lines = cases.map { JSONValue.object(["expression": .string($0.expression), "data": $0.data]).description }
        try (lines.joined(separator: "\n") + "\n").write(to: inputURL, atomically: true, encoding: .utf8)
        let (status, output) = try await run(python, [driverURL.path, inputURL.path, outputURL.path])
        guard status == 0 else { throw Failure.driverFailed(status: status, output: output) }
        let text = try String(contentsOf: outputURL, encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONValue(json: String($0)) }
    }

    /// Runs a program to its end on a thread of its own (a wait blocks its thread, and a cooperative one is half of
    /// what runs the other tests on a 2-core machine) and answers its status and output.
    private static func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        let process = Process()
                        process.executableURL = URL(fileURLWithPath: executable)
                        process.arguments = arguments
                        let pipe = Pipe()
                        process.standardOutput = pipe
                        process.standardError = pipe
                        try process.run()
                        let output = pipe.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
                    })
            }.start()
        }
    }

    static let driver = #"""
        # Evaluates JMESPath cases with the reference Python implementation for the Swift differential test.
        # Input: JSON lines {"expression": ..., "data": ...}. Output: one JSON line per case,
        # {"reference": OUTCOME} and, where the specification-conformant variant differs,
        # "spec": OUTCOME and "deviations": [names]. OUTCOME is {"result": value} or {"error": kind}.
        #
        # "reference" is jmespath.py with representation-only normalizations, none of which changes what is computed:
        #   - to_string writes integral floats without ".0", object keys sorted, non-ASCII unescaped (the Swift
        #     implementation's JSON text; both spellings are valid JSON for the same value);
        #   - keys(), values() and the object wildcard `*` list members in key order (JSON objects are unordered,
        #     and the Swift implementation uses key order).
        # "spec" additionally corrects the places where jmespath.py departs from the specification:
        #   - string-ordering: `<`, `<=`, `>`, `>=` order strings; the specification orders numbers only, else null;
        #   - bool-number-equality: 0 and 1 equal false and true inside arrays and objects (and in contains());
        #   - contains-non-string: contains(string, non-string) raises Python's TypeError instead of giving false;
        #   - to-number-json-grammar: to_number accepts Python's number syntax (" 7", "+1", "1_0", "inf", ".5"),
        #     not just JSON numbers;
        #   - mixed-sort-keys: min_by/max_by raise Python's TypeError, not an invalid-type error, for keys that mix
        #     numbers and strings;
        #   - argument-commas: function arguments need not be separated by commas (`abs(@ @)` parses), nor the
        #     key-value pairs of a multi-select hash (`{a: a b: b}` parses);
        #   - variadic-argument-types: only the first argument of merge() is type-checked (merge(@, 'x') fails with
        #     Python's ValueError, merge(@, `[{"a": 1}]`) treats the array as key-value pairs);
        #   - slice-after-index: a slice right after an index (`a[0][1:]`) does not start a projection, so
        #     `a[0][1:].b` is null (jmespath.py pull request 374);
        #   - slice-numbers: a slice may have two numbers in one place, the last one counting (`[:-4-2]` is `[:-2]`).
        import json
        import math
        import sys

        import jmespath
        from jmespath import exceptions, functions, visitor
        from jmespath import parser as jmespath_parser
        from jmespath.visitor import Options

        SPEC = set()
        DEVIATIONS = ["string-ordering", "bool-number-equality", "contains-non-string", "to-number-json-grammar",
                      "mixed-sort-keys", "argument-commas", "variadic-argument-types", "slice-after-index",
                      "slice-numbers"]


        def is_number(value):
            return isinstance(value, (int, float)) and not isinstance(value, bool)


        def integral_floats_as_ints(value):
            if isinstance(value, float) and math.isfinite(value) and value == int(value) and abs(value) <= 2 ** 53:
                return int(value)
            if isinstance(value, list):
                return [integral_floats_as_ints(element) for element in value]
            if isinstance(value, dict):
                return {key: integral_floats_as_ints(element) for key, element in value.items()}
            return value


        def strict_equal(left, right):
            if isinstance(left, bool) or isinstance(right, bool):
                return isinstance(left, bool) and isinstance(right, bool) and left == right
            if is_number(left) or is_number(right):
                return is_number(left) and is_number(right) and left == right
            if isinstance(left, list) and isinstance(right, list):
                return len(left) == len(right) and all(strict_equal(a, b) for a, b in zip(left, right))
            if isinstance(left, dict) and isinstance(right, dict):
                return left.keys() == right.keys() and all(strict_equal(left[key], right[key]) for key in left)
            return type(left) is type(right) and left == right


        stock_equals = visitor._equals
        stock_is_comparable = visitor._is_comparable
        equals = lambda x, y: strict_equal(x, y) if "bool-number-equality" in SPEC else stock_equals(x, y)
        visitor.TreeInterpreter.COMPARATOR_FUNC['eq'] = equals
        visitor.TreeInterpreter.COMPARATOR_FUNC['ne'] = lambda x, y: not equals(x, y)
        visitor._is_comparable = lambda x: is_number(x) if "string-ordering" in SPEC else stock_is_comparable(x)


        def sorted_value_projection(self, node, value):
            base = self.visit(node['children'][0], value)
            if not isinstance(base, dict):
                return None
            collected = []
            for key in sorted(base):
                current = self.visit(node['children'][1], base[key])
                if current is not None:
                    collected.append(current)
            return collected


        visitor.TreeInterpreter.visit_value_projection = sorted_value_projection

        stock_led_lparen = jmespath_parser.Parser._token_led_lparen


        def strict_led_lparen(self, left):
            if "argument-commas" not in SPEC or left['type'] != 'field':
                return stock_led_lparen(self, left)
            args = []
            if self._current_token() != 'rparen':
                while True:
                    args.append(self._expression())
                    if self._current_token() == 'rparen':
                        break
                    self._match('comma')
            self._match('rparen')
            return jmespath.ast.function_expression(left['value'], args)


        jmespath_parser.Parser._token_led_lparen = strict_led_lparen

        stock_multi_select_hash = jmespath_parser.Parser._parse_multi_select_hash


        def strict_multi_select_hash(self):
            if "argument-commas" not in SPEC:
                return stock_multi_select_hash(self)
            pairs = []
            while True:
                key_token = self._lookahead_token(0)
                self._match_multiple_tokens(token_types=['quoted_identifier', 'unquoted_identifier'])
                self._match('colon')
                pairs.append(jmespath.ast.key_val_pair(key_name=key_token['value'], node=self._expression(0)))
                if self._current_token() == 'rbrace':
                    self._match('rbrace')
                    return jmespath.ast.multi_select_dict(nodes=pairs)
                self._match('comma')


        jmespath_parser.Parser._parse_multi_select_hash = strict_multi_select_hash

        stock_led_lbracket = jmespath_parser.Parser._token_led_lbracket


        def projecting_led_lbracket(self, left):
            if "slice-after-index" in SPEC and left['type'] == 'index_expression':
                # Wrapping the left side keeps the optimisation that merges it with an index from applying.
                return stock_led_lbracket(self, jmespath.ast.subexpression([left]))
            return stock_led_lbracket(self, left)


        jmespath_parser.Parser._token_led_lbracket = projecting_led_lbracket

        stock_slice_expression = jmespath_parser.Parser._parse_slice_expression


        def strict_slice_expression(self):
            if "slice-numbers" not in SPEC:
                return stock_slice_expression(self)
            parts = [None, None, None]
            index = 0
            while self._current_token() != 'rbracket':
                if self._current_token() == 'colon' and index < 2:
                    index += 1
                elif self._current_token() == 'number' and parts[index] is None:
                    parts[index] = self._lookahead_token(0)['value']
                else:
                    self._raise_parse_error_for_token(self._lookahead_token(0), 'syntax error')
                self._advance()
            self._match('rbracket')
            return jmespath.ast.slice(*parts)


        jmespath_parser.Parser._parse_slice_expression = strict_slice_expression


        class ReferenceFunctions(functions.Functions):
            @functions.signature({'types': []})
            def _func_to_string(self, arg):
                if isinstance(arg, str):
                    return arg
                return json.dumps(integral_floats_as_ints(arg), sort_keys=True, ensure_ascii=False, separators=(',', ':'))

            @functions.signature({'types': ['object']})
            def _func_keys(self, arg):
                return sorted(arg)

            @functions.signature({'types': ['object']})
            def _func_values(self, arg):
                return [arg[key] for key in sorted(arg)]

            @functions.signature({'types': ['array', 'string']}, {'types': []})
            def _func_contains(self, subject, search):
                if isinstance(subject, str) and not isinstance(search, str) and "contains-non-string" in SPEC:
                    return False
                if isinstance(subject, list) and "bool-number-equality" in SPEC:
                    return any(strict_equal(element, search) for element in subject)
                return search in subject

            @functions.signature({'types': []})
            def _func_to_number(self, arg):
                if "to-number-json-grammar" in SPEC and isinstance(arg, str):
                    import re
                    if not re.fullmatch(r'-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?', arg):
                        return None
                    number = float(arg)
                    return number if math.isfinite(number) else None
                return super()._func_to_number(arg)

            def _uniform_keys(self, array, expref, name):
                keys = [expref.visit(expref.expression, element) for element in array]
                if "mixed-sort-keys" in SPEC and keys:
                    kinds = {'number' if is_number(key) else 'string' if isinstance(key, str) else 'other' for key in keys}
                    if len(kinds) > 1:
                        raise exceptions.JMESPathTypeError(name, keys[0], 'mixed', ['number', 'string'])

            @functions.signature({'types': ['array']}, {'types': ['expref']})
            def _func_min_by(self, array, expref):
                self._uniform_keys(array, expref, 'min_by')
                return super()._func_min_by(array, expref)

            @functions.signature({'types': ['array']}, {'types': ['expref']})
            def _func_max_by(self, array, expref):
                self._uniform_keys(array, expref, 'max_by')
                return super()._func_max_by(array, expref)


            def _type_check(self, actual, signature, function_name):
                if "variadic-argument-types" in SPEC and signature and signature[-1].get('variadic'):
                    signature = list(signature) + [signature[-1]] * (len(actual) - len(signature))
                return super()._type_check(actual, signature, function_name)


        FUNCTIONS = ReferenceFunctions()


        def error_kind(error):
            if isinstance(error, (exceptions.ArityError, exceptions.VariadictArityError)):
                return "invalid-arity"
            if isinstance(error, (exceptions.ParseError, exceptions.EmptyExpressionError)):
                return "syntax"
            if isinstance(error, exceptions.UnknownFunctionError):
                return "unknown-function"
            if isinstance(error, exceptions.JMESPathTypeError):
                return "invalid-type"
            return "python-jmespath-error:" + type(error).__name__


        def run(expression, data, spec):
            SPEC.clear()
            SPEC.update(spec)
            try:
                parsed = jmespath_parser.Parser()._do_parse(expression)
                result = parsed.search(data, options=Options(custom_functions=FUNCTIONS))
            except exceptions.JMESPathError as error:
                return {"error": error_kind(error)}
            except Exception as error:
                return {"error": "python-exception:%s: %s" % (type(error).__name__, error)}
            try:
                json.dumps(result, allow_nan=False)
            except (TypeError, ValueError) as error:
                return {"error": "python-unserializable:%s" % error}
            return {"result": result}


        def same(left, right):
            return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


        def main(input_path, output_path):
            with open(input_path, encoding="utf-8") as cases, open(output_path, "w", encoding="utf-8") as out:
                for line in cases:
                    case = json.loads(line)
                    expression, data = case["expression"], case["data"]
                    reference = run(expression, data, set())
                    outcome = {"reference": reference}
                    spec = run(expression, data, set(DEVIATIONS))
                    if not same(spec, reference):
                        outcome["spec"] = spec
                        outcome["deviations"] = [name for name in DEVIATIONS if not same(run(expression, data, {name}), reference)]
                    out.write(json.dumps(outcome, ensure_ascii=False, allow_nan=False) + "\n")


        if __name__ == "__main__":
            main(sys.argv[1], sys.argv[2])
        """#
}
