/// A set of JMESPath types, for what a function parameter accepts.
///
/// Beyond the six JSON types there are typed arrays (`arrayOfNumbers`, `arrayOfStrings`: every element of that type;
/// an empty array qualifies) and `expression`, an expression reference written `&expression`. A parameter with
/// `.arrayOfNumbers` and `.arrayOfStrings` takes an array of either kind, but not a mix.
public struct JMESPathType: OptionSet, Sendable, Hashable {
    /// The bits of the set.
    public let rawValue: UInt16

    /// Creates a set from its bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// JSON `null`.
    public static let null = JMESPathType(rawValue: 1 << 0)
    /// `true` or `false`.
    public static let boolean = JMESPathType(rawValue: 1 << 1)
    /// A number.
    public static let number = JMESPathType(rawValue: 1 << 2)
    /// A string.
    public static let string = JMESPathType(rawValue: 1 << 3)
    /// Any array.
    public static let array = JMESPathType(rawValue: 1 << 4)
    /// An object.
    public static let object = JMESPathType(rawValue: 1 << 5)
    /// An array whose elements are all numbers.
    public static let arrayOfNumbers = JMESPathType(rawValue: 1 << 6)
    /// An array whose elements are all strings.
    public static let arrayOfStrings = JMESPathType(rawValue: 1 << 7)
    /// An expression reference, `&expression`: the function receives it unevaluated.
    public static let expression = JMESPathType(rawValue: 1 << 8)
    /// Any JSON value (not an expression reference).
    public static let any: JMESPathType = [.null, .boolean, .number, .string, .array, .object]

    /// Whether a JSON value is of one of the types in the set.
    public func accepts(_ value: JSONValue) -> Bool {
        switch value {
        case .null: contains(.null)
        case .bool: contains(.boolean)
        case .number: contains(.number)
        case .string: contains(.string)
        case .object: contains(.object)
        case .array(let elements):
            contains(.array)
                || (contains(.arrayOfNumbers) && elements.allSatisfy { if case .number = $0 { true } else { false } })
                || (contains(.arrayOfStrings) && elements.allSatisfy { if case .string = $0 { true } else { false } })
        }
    }

    /// The set in words, for error messages: "a number", "an array of numbers or an array of strings".
    var phrase: String {
        if self == .any { return "any value" }
        let names: [(JMESPathType, String)] = [
            (.null, "null"), (.boolean, "a boolean"), (.number, "a number"), (.string, "a string"), (.array, "an array"),
            (.object, "an object"), (.arrayOfNumbers, "an array of numbers"), (.arrayOfStrings, "an array of strings"),
            (.expression, "an expression reference (&…)"),
        ]
        let words = names.filter { contains($0.0) }.map(\.1)
        guard let last = words.last else { return "nothing" }
        return words.count == 1 ? last : words.dropLast().joined(separator: ", ") + " or " + last
    }
}
