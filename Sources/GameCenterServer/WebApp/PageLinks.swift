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
        // Most segments (bundle ids, categories, numbers) need no escaping: checking bytes is far cheaper.
        if text.utf8.allSatisfy(isUnreserved) { return text }
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
