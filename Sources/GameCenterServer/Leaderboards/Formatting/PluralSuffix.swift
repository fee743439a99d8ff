/// The text appended to a formatted score, one form per CLDR plural category.
///
/// `other` is required and is what every missing category falls back to. The memberwise-style
/// initializer keeps `PluralSuffix(one: "point", other: "points")` source compatible with the
/// earlier one/other-only shape.
public struct PluralSuffix: Sendable, Equatable {
    /// The form for the CLDR `zero` category (e.g. Arabic 0), if the manifest gives one.
    public var zero: String?
    /// The form for the CLDR `one` category (e.g. English 1), if the manifest gives one.
    public var one: String?
    /// The form for the CLDR `two` category (e.g. Arabic 2), if the manifest gives one.
    public var two: String?
    /// The form for the CLDR `few` category (e.g. Polish 2–4), if the manifest gives one.
    public var few: String?
    /// The form for the CLDR `many` category (e.g. Russian 5–20), if the manifest gives one.
    public var many: String?
    /// The form for the CLDR `other` category; also the fallback for every missing category.
    public var other: String

    /// Creates a suffix from its forms; only `other` is required.
    public init(zero: String? = nil, one: String? = nil, two: String? = nil, few: String? = nil, many: String? = nil, other: String) {
        self.zero = zero
        self.one = one
        self.two = two
        self.few = few
        self.many = many
        self.other = other
    }

    /// Creates a suffix from a category-keyed table as decoded from a manifest; `nil` when `other` is missing.
    public init?(forms: [PluralCategory: String]) {
        guard let other = forms[.other] else { return nil }
        self.init(zero: forms[.zero], one: forms[.one], two: forms[.two], few: forms[.few], many: forms[.many], other: other)
    }

    /// The forms that are present, keyed by category; always contains `.other`.
    public var forms: [PluralCategory: String] {
        var result: [PluralCategory: String] = [.other: other]
        for category in PluralCategory.allCases {
            if let text = self[category] { result[category] = text }
        }
        return result
    }

    /// The form stored for exactly `category`, without falling back to `other`.
    ///
    /// Assigning `nil` to `.other` is ignored, because `other` is required.
    public subscript(category: PluralCategory) -> String? {
        get {
            switch category {
            case .zero: zero
            case .one: one
            case .two: two
            case .few: few
            case .many: many
            case .other: other
            }
        }
        set {
            switch category {
            case .zero: zero = newValue
            case .one: one = newValue
            case .two: two = newValue
            case .few: few = newValue
            case .many: many = newValue
            case .other: if let newValue { other = newValue }
            }
        }
    }

    /// The form to show for `category`: its own form if present, otherwise `other`.
    public func form(for category: PluralCategory) -> String {
        self[category] ?? other
    }
}
