import Foundation
import Hummingbird

/// `GET /openapi.yaml`: the OpenAPI 3.1 description of every route, shipped as a resource.
struct OpenAPIDocument {
    /// The document's text.
    static let text = BundledText.read("openapi", "yaml")

    func add(to router: Router<AppRequestContext>) {
        router.get("openapi.yaml") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: Self.text)))
        }
    }
}
