import JMESPath
import Testing

/// Behaviour the compliance suite leaves open or does not reach: extreme slices, member order, string ordering by
/// code point, number formatting and parsing, and any Unicode in expressions.
@Suite struct InterpreterTests {
    static func evaluate(_ source: String, _ data: JSONValue) throws -> JSONValue {
        try JMESPathExpression(compiling: source).evaluate(data)
    }

    @Test func extremeIndexesAndSlicesClampWithoutOverflow() throws {
        let data: JSONValue = [0, 1, 2, 3, 4]
        #expect(try Self.evaluate("[99999999999999999999]", data) == nil)
        #expect(try Self.evaluate("[-99999999999999999999]", data) == nil)
        #expect(try Self.evaluate("[-99999999999999999999:99999999999999999999]", data) == data)
        #expect(try Self.evaluate("[::9223372036854775807]", data) == [0])
        #expect(try Self.evaluate("[::-9223372036854775808]", data) == [4])
        #expect(try Self.evaluate("[3:1:-1]", data) == [3, 2])
        #expect(try Self.evaluate("[-2::-2]", data) == [3, 1])
    }

    @Test func objectMembersComeInCodePointOrderOfTheirKeys() throws {
        let data: JSONValue = ["b": 1, "a": 2, "é": 3, "Z": 4]
        #expect(try Self.evaluate("keys(@)", data) == ["Z", "a", "b", "é"])
        #expect(try Self.evaluate("values(@)", data) == [4, 2, 1, 3])
        #expect(try Self.evaluate("*", data) == [4, 2, 1, 3])
        #expect(try Self.evaluate("to_string(@)", data) == #"{"Z":4,"a":2,"b":1,"é":3}"#)
    }

    @Test func stringsSortCompareAndMeasureByCodePoint() throws {
        let data: JSONValue = ["words": ["é", "z", "e\u{301}", "Z"], "decomposed": "e\u{301}"]
        #expect(try Self.evaluate("sort(words)", data) == ["Z", "e\u{301}", "z", "é"])
        #expect(try Self.evaluate("max(words)", data) == "é")
        #expect(try Self.evaluate("length(decomposed)", data) == 2)
        #expect(try Self.evaluate("reverse(decomposed)", data) == "\u{301}e")
        #expect(try Self.evaluate("starts_with(decomposed, 'e')", data) == true)
        #expect(try Self.evaluate("contains(words, 'é')", data) == true)
        #expect(try Self.evaluate("words[?@ == 'é'] | length(@)", data) == 1)
    }

    @Test func sortByKeepsTheOrderOfEqualKeys() throws {
        let data: JSONValue = .array((0..<50).map { ["rank": .number(Double($0 % 3)), "id": .number(Double($0))] })
        let ids = try Self.evaluate("sort_by(@, &rank)[].id", data)
        let expected = [0.0, 1, 2].flatMap { rank in (0..<50).filter { Double($0 % 3) == rank }.map { JSONValue.number(Double($0)) } }
        #expect(ids == .array(expected))
    }

    @Test func numbersPrintAndParseAsJSON() throws {
        #expect(try Self.evaluate("to_string(`1.0`)", nil) == "1")
        #expect(try Self.evaluate("to_string(`[1.5, -0.0, 1e300]`)", nil) == "[1.5,0,1e+300]")
        #expect(
            try Self.evaluate("[to_number('1e3'), to_number('-0.5'), to_number('+1'), to_number(' 1'), to_number('1.'), to_number('1e400')]", [:])
                == [1000, -0.5, nil, nil, nil, nil])
    }

    /// Random strings of awkward scalars (combining marks, emoji, NUL, byte order marks, right-to-left marks, private
    /// use) among JMESPath punctuation: compiling either succeeds or fails with an offset inside the expression.
    @Test func anyUnicodeIsLexedSafely() {
        let pool = Array("ab.[]{}()*@&|!?=<>'`\":,- \t\u{0}\u{301}\u{FEFF}\u{200F}\u{E000}é😀👩‍👩‍👧\\".unicodeScalars)
        var state: UInt64 = 42
        for _ in 0..<5_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int(state % 24) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                scalars.append(pool[Int((state >> 33) % UInt64(pool.count))])
            }
            let source = String(scalars)
            do {
                _ = try JMESPathExpression(compiling: source).evaluate(["a": ["b": [1, "é"]]])
            } catch {
                #expect((0...scalars.count).contains(error.offset ?? 0), "\(source.debugDescription): \(error)")
            }
        }
    }
}
