import Foundation

/// Builds the app's links: paths with escaped segments and query strings.
enum PageLinks {
    /// `/games/BUNDLE/SECTION` plus the query `parameters` (in order, nil values left out).
    static func game(_ bundleID: String, _ section: String, _ parameters: [(String, String?)] = []) -> String {
        let path = "/games/\(segment(bundleID))/\(section)"
        let query = parameters.compactMap { name, value in value.map { "\(name)=\(component($0))" } }.joined(separator: "&")
        return query.isEmpty ? path : path + "?" + query
    }

    /// `text` escaped for one path segment.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static func component(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
