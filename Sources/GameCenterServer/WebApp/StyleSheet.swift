import Foundation
import Hummingbird

/// `GET /app.css` and `GET /app.js`: the web app's one style sheet and its one script (live notices, ``LiveNotices``;
/// every page works without it), shipped as resources.
struct StyleSheet {
    /// The style sheet's text.
    static let text = BundledText.read("app", "css", in: "Resources/web")
    /// The script's text.
    static let script = BundledText.read("app", "js", in: "Resources/web")

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        router.get("app.css") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: Self.text)))
        }
        router.get("app.js") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "public, max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: Self.script)))
        }
    }
}
