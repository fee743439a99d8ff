/// Names in running text: `Ann`, `Ann and Bob`, `Ann, Bob and Cy`.
enum ListFormat {
    /// `names` joined with commas and a final "and".
    static func and(_ names: [String]) -> String {
        guard let last = names.last else { return "" }
        return names.count == 1 ? last : names.dropLast().joined(separator: ", ") + " and " + last
    }
}
