import Foundation

/// Builds the app's links: paths with escaped segments and query strings.
enum PageLinks {
    /// `/games/BUNDLE/SECTION` plus the query `parameters` (in order, nil values left out).
    static func game(_ bundleID: String, _ section: String, _ parameters: [(String, String?)] = []) -> String {
        let path = "/games/\(segment(bundleID))/\(section)"
        let query = parameters.compactMap { name, value in value.map { "\(name)=\(segment($0))" } }.joined(separator: "&")
        return query.isEmpty ? path : path + "?" + query
    }

    /// `text` escaped for one path segment or query value: everything but RFC 3986's unreserved characters.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
