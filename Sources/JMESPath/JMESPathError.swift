/// What went wrong compiling or evaluating a JMESPath expression: the kind of error, where in the expression, and a
/// message for the person who wrote it.
///
/// Compile errors always carry the offset of the offending character; evaluation errors carry the offset of the
/// function call that failed, when one did. Offsets count Unicode scalars (code points) from the start of the
/// expression, starting at 0.
public struct JMESPathError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The category of an error, as the JMESPath specification and its compliance suite name them.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The expression is not valid JMESPath.
        case syntax
        /// A function the function table does not have.
        case unknownFunction = "unknown-function"
        /// A function called with the wrong number of arguments.
        case invalidArity = "invalid-arity"
        /// A function argument (or an expression reference used as a value) of a type the function does not accept.
        case invalidType = "invalid-type"
        /// A value of the right type that is still not allowed, such as a slice step of 0.
        case invalidValue = "invalid-value"
    }

    /// The category of the error.
    public var kind: Kind
    /// Where in the expression the error is, in Unicode scalars from its start; nil when no place applies.
    public var offset: Int?
    /// What was wrong and, for syntax errors, what was expected instead; without the position.
    public var message: String

    /// Creates an error; custom functions throw these, usually without an offset (the call's offset is filled in).
    public init(_ kind: Kind, _ message: String, offset: Int? = nil) {
        self.kind = kind
        self.message = message
        self.offset = offset
    }

    /// The message, preceded by `position N: ` when the error has an offset.
    public var description: String {
        guard let offset else { return message }
        return "position \(offset): \(message)"
    }
}
