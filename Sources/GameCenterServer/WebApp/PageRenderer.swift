import Foundation
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
        return Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                         body: .init(byteBuffer: ByteBuffer(string: html)))
    }

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
