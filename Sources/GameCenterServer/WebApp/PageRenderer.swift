import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// Renders the app's pages from the mustache templates shipped in `Resources/templates`, parsed once at start.
///
/// `{{name}}` escapes HTML; the templates never use `{{{name}}}`, so nothing a player typed is ever markup.
struct PageRenderer: Sendable {
    /// The parsed templates, by file name without `.mustache`.
    let library: MustacheLibrary

    /// The templates shipped with the server. A template that does not parse is a defect of this build, found by
    /// the web app's tests, which render every page.
    static let shipped: PageRenderer = {
        do {
            return PageRenderer(library: try loadLibrary())
        } catch {
            fatalError("the web app's templates do not parse: \(error)")
        }
    }()

    /// Renders `template` with `context` into an HTML response.
    func render(_ template: String, _ context: Any, status: HTTPResponse.Status = .ok) -> Response {
        let html = library.render(context, withTemplate: template) ?? ""
        return Response(status: status, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// Pages are never cached (they hold the player's data and form tokens), run no script, load only this
    /// server's style sheet and images, submit forms only here, and cannot be framed by another site.
    static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8",
        .cacheControl: "no-store",
        .contentSecurityPolicy: "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        .xContentTypeOptions: "nosniff",
        .referrerPolicy: "same-origin",
    ]

    private static func loadLibrary() throws -> MustacheLibrary {
        guard let folder = Bundle.module.url(forResource: "templates", withExtension: nil, subdirectory: "Resources") else {
            return MustacheLibrary()
        }
        var library = MustacheLibrary()
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        where file.pathExtension == "mustache" {
            try library.register(String(contentsOf: file, encoding: .utf8), named: file.deletingPathExtension().lastPathComponent)
        }
        return library
    }
}

extension HTTPField.Name {
    /// How much of the page's address other sites are told.
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
