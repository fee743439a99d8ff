import Foundation
import Hummingbird

/// `GET /openapi.yaml`: the OpenAPI 3.1 description of every route, shipped as a resource.
struct OpenAPIDocument {
    /// The document's text.
    static let text: String = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml", subdirectory: "Resources"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return "" }
        return text
    }()

    func add(to router: Router<AppRequestContext>) {
        router.get("openapi.yaml") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: Self.text)))
        }
    }
}
