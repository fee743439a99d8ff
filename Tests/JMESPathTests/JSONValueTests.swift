import Foundation
import JMESPath
import Testing

/// JSONValue reads and writes plain JSON, keeps booleans apart from numbers, and compares as JSON does.
@Suite struct JSONValueTests {
    @Test func decodesBooleansAsBooleansAndNumbersAsNumbers() throws {
        let value = try JSONValue(json: #"[true, false, 1, 0, 1.5, -0.25, null, "x", {"a": [1e3]}]"#)
        #expect(value == [true, false, 1, 0, 1.5, -0.25, nil, "x", ["a": [1000]]])
        guard case .array(let elements) = value else { return }
        #expect(elements.map(\.typeName) == ["boolean", "boolean", "number", "number", "number", "number", "null", "string", "object"])
        #expect(try JSONValue(jsonData: Data("3".utf8)) == 3)
        #expect(throws: (any Error).self) { try JSONValue(json: "[1, 2") }
    }

    @Test func encodesIntegralNumbersWithoutAFraction() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode([1.0, -3.0, 1.5, 9_007_199_254_740_992, ["b": 2.0, "a": nil]] as JSONValue), as: UTF8.self)
        #expect(text == #"[1,-3,1.5,9007199254740992,{"a":null,"b":2}]"#)
    }

    @Test func describesItselfAsCompactJSONWithSortedKeys() {
        let value: JSONValue = ["b": 1, "a": [true, nil, "tab\there \"quoted\" \u{1}"], "é": 0.5]
        #expect(value.description == #"{"a":[true,null,"tab\there \"quoted\" \u0001"],"b":1,"é":0.5}"#)
    }

    @Test func roundTripsRandomValues() throws {
        var generator = RandomCaseGenerator(seed: 7)
        for _ in 0..<500 {
            let value = generator.data()
            #expect(try JSONValue(json: value.description) == value)
            #expect(try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value)) == value)
        }
    }

    @Test func comparesAsJSON() {
        #expect(JSONValue.number(1) == 1.0)
        #expect(JSONValue.bool(true) != 1)
        #expect(JSONValue.null != false)
        // Unicode scalars, not canonical equivalence: precomposed é is not e + combining acute.
        #expect(JSONValue.string("\u{E9}") != .string("e\u{301}"))
        let a: JSONValue = ["x": 1, "y": [1, 2]]
        let b: JSONValue = ["y": [1, 2], "x": 1.0]
        #expect(a == b && a.hashValue == b.hashValue)
        #expect(Set<JSONValue>([0, -0.0, 1, 1.0]).count == 2)
    }

    @Test func truthinessFollowsTheSpecification() {
        let falsy: [JSONValue] = [false, nil, "", [], [:]]
        let truthy: [JSONValue] = [true, 0, -1, " ", [nil], ["a": nil]]
        #expect(falsy.allSatisfy { !$0.isTruthy })
        #expect(truthy.allSatisfy { $0.isTruthy })
    }
}
