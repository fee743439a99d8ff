import Foundation
import Hummingbird

/// `GET /app.css`: the web app's one style sheet, shipped as a resource.
struct StyleSheet {
    /// The style sheet's text.
    static let text = BundledText.read("app", "css", in: "Resources/web")

    /// Adds the route.
    func add(to router: Router<AppRequestContext>) {
        router.get("app.css") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: Self.text)))
        }
    }
}
