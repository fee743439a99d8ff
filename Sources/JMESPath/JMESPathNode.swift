/// A node of a compiled JMESPath expression's syntax tree, with the height of the tree below it (which the parser
/// bounds, so that evaluating the tree cannot run out of stack).
struct JMESPathNode: Sendable {
    /// What the node does; children are evaluated as the interpreter describes.
    indirect enum Kind: Sendable {
        /// `@`, and the implicit left side of `[*]`, `[?…]`, `*` and `[]` at the start of an expression.
        case current
        case field(String)
        case literal(JSONValue)
        /// `left.right` or `left[index]`: `right` evaluated against what `left` gives.
        case subexpression(JMESPathNode, JMESPathNode)
        /// `left | right`: like a subexpression, and also ends any projection on its left.
        case pipe(JMESPathNode, JMESPathNode)
        case index(Int)
        /// A slice; the parser refuses expressions with a step of 0.
        case slice(start: Int?, stop: Int?, step: Int?)
        /// `right` evaluated against each element of the array `left` gives, nulls left out.
        case projection(JMESPathNode, JMESPathNode)
        /// `right` evaluated against each value of the object `left` gives, in key order, nulls left out.
        case valueProjection(JMESPathNode, JMESPathNode)
        /// `right` evaluated against each element of the array `left` gives for which `condition` is truthy.
        case filterProjection(JMESPathNode, condition: JMESPathNode, JMESPathNode)
        /// The array `operand` gives, with its array elements spliced in.
        case flatten(JMESPathNode)
        case multiSelectList([JMESPathNode])
        case multiSelectHash([(key: String, value: JMESPathNode)])
        case or(JMESPathNode, JMESPathNode)
        case and(JMESPathNode, JMESPathNode)
        case not(JMESPathNode)
        case comparison(Comparator, JMESPathNode, JMESPathNode)
        /// A call of a function resolved at compile time; `offset` is where its name starts, for error messages.
        case function(JMESPathFunction, [JMESPathNode], offset: Int)
        /// `&expression`, which the parser only allows as a function argument.
        case expressionReference(JMESPathExpression)
    }

    /// Comparison operators.
    enum Comparator: Sendable {
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
    }

    let kind: Kind
    /// 1 for a leaf; one more than the highest child otherwise.
    let height: Int

    init(_ kind: Kind) {
        self.kind = kind
        height = 1 + JMESPathNode.children(of: kind).reduce(0) { max($0, $1.height) }
    }

    static func children(of kind: Kind) -> [JMESPathNode] {
        switch kind {
        case .current, .field, .literal, .index, .slice: []
        case .subexpression(let left, let right), .pipe(let left, let right), .projection(let left, let right),
            .valueProjection(let left, let right), .or(let left, let right), .and(let left, let right),
            .comparison(_, let left, let right):
            [left, right]
        case .filterProjection(let left, let condition, let right): [left, condition, right]
        case .flatten(let operand), .not(let operand): [operand]
        case .multiSelectList(let elements): elements
        case .multiSelectHash(let pairs): pairs.map(\.value)
        case .function(_, let arguments, _): arguments
        case .expressionReference(let expression): [expression.root]
        }
    }
}
