/// A query parameter read with a default, or refused with what is allowed.
enum QueryParameter {
    /// One of `T`'s raw values, or `fallback` when absent.
    static func choice<T: RawRepresentable & CaseIterable>(_ text: Substring?, as type: T.Type, name: String, default fallback: T) throws -> T
    where T.RawValue == String {
        guard let text else { return fallback }
        guard let value = T(rawValue: String(text)) else {
            throw APIError.invalidParameter("\(name) '\(text.prefix(40))' is not one of: \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// An integer, or `fallback` when absent.
    static func integer(_ text: Substring?, name: String, default fallback: Int) throws -> Int {
        guard let text else { return fallback }
        guard let value = Int(text) else { throw APIError.invalidParameter("\(name) '\(text.prefix(40))' is not an integer") }
        return value
    }
}
