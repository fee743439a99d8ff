import Foundation
import HTTPTypes

extension APIClient {
    /// The `ws://` (or `wss://`) URL of `pathAndQuery` on the server at `base`.
    static func webSocketURL(on base: URL, _ pathAndQuery: String) -> String {
        base.absoluteString.trimmingSuffix("/")
            .replacingOccurrences(of: "http://", with: "ws://").replacingOccurrences(of: "https://", with: "wss://")
            + pathAndQuery
    }

    /// The device headers (and session) for a WebSocket upgrade.
    func webSocketHeaders(token: String) -> HTTPFields {
        var headers = HTTPFields()
        for (name, value) in deviceHeaders(token: token) {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        return headers
    }
}
