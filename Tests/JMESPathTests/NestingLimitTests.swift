import Foundation
import JMESPath
import Testing

/// No expression can exhaust the stack: nesting deeper than 128 levels is refused at compile time with a syntax
/// error, and the deepest expressions accepted compile and evaluate on a thread with only 512 KiB of stack (what
/// Apple platforms give secondary threads and Swift concurrency's), or 2 MiB in a debug build, whose stack frames are
/// several times larger.
@Suite struct NestingLimitTests {
    /// One way of nesting: the expression for `depth` levels, and data that makes evaluation go all the way down.
    struct Shape: Sendable, CustomTestStringConvertible {
        var name: String
        var expression: @Sendable (Int) -> String
        var data: @Sendable (Int) -> JSONValue = { _ in ["a": -1] }
        var testDescription: String { name }
    }

    static let shapes: [Shape] = [
        Shape(name: "parentheses") { String(repeating: "(", count: $0) + "a" + String(repeating: ")", count: $0) },
        Shape(name: "not") { String(repeating: "!", count: $0) + "a" },
        Shape(name: "multi-select lists") { String(repeating: "[", count: $0) + "a" + String(repeating: "]", count: $0) },
        Shape(name: "multi-select hashes") { String(repeating: "{a: ", count: $0) + "a" + String(repeating: "}", count: $0) },
        Shape(name: "function calls") { String(repeating: "abs(", count: $0) + "a" + String(repeating: ")", count: $0) },
        Shape(name: "expression references") { String(repeating: "map(&", count: $0) + "a" + String(repeating: ", @)", count: $0) },
        Shape(name: "pipes") { String(repeating: "a | ", count: $0) + "a" },
        Shape(name: "or") { String(repeating: "`false` || ", count: $0) + "a" },
        Shape(name: "comparisons") { String(repeating: "a == ", count: $0) + "a" },
        Shape(name: "flattens") { "a" + String(repeating: "[]", count: $0) },
        Shape(
            name: "subexpressions", expression: { "a" + String(repeating: ".a", count: $0) },
            data: { depth in
                (0...depth).reduce(JSONValue.number(1)) { inner, _ in ["a": inner] }
            }),
        Shape(
            name: "projections", expression: { "a" + String(repeating: "[*].a", count: $0) },
            data: { depth in
                (0...depth).reduce(JSONValue.number(1)) { inner, _ in ["a": [inner]] }
            }),
        Shape(name: "JSON literal") { "`" + String(repeating: "[", count: $0) + String(repeating: "]", count: $0) + "`" },
    ]

    @Test(arguments: shapes) func farTooDeepIsRefused(_ shape: Shape) {
        #expect {
            _ = try JMESPathExpression(compiling: shape.expression(100_000))
        } throws: { error in
            guard let error = error as? JMESPathError else { return false }
            return error.kind == .syntax && error.message.contains("deeper than 128 levels")
        }
    }

    @Test(arguments: shapes) func theDeepestAcceptedRunsOnASmallStack(_ shape: Shape) async throws {
        var deepest = 0
        while (try? JMESPathExpression(compiling: shape.expression(deepest + 1))) != nil, deepest < 1_000 { deepest += 1 }
        #expect((60...128).contains(deepest), "\(shape.name): \(deepest) levels accepted")
        let source = shape.expression(deepest)
        let data = shape.data(deepest)
        await Self.onSmallStack {
            // Evaluation errors (abs of an array, say) are fine; running out of stack is not.
            _ = try? JMESPathExpression(compiling: source).evaluate(data)
        }
    }

    #if DEBUG
    static let smallStack = 2 << 20
    #else
    static let smallStack = 512 << 10
    #endif

    /// Runs `body` on a new thread with ``smallStack`` bytes of stack.
    static func onSmallStack(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                body()
                continuation.resume()
            }
            thread.stackSize = smallStack
            thread.start()
        }
    }
}
