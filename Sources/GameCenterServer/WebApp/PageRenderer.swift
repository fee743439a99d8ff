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
    /// Where the time each page took to render is recorded (`webapp_page_render_seconds`, by template).
    let metrics: ServerMetrics?

    /// The templates shipped with the server, parsed once. A template that does not parse is a defect of this build,
    /// found by the web app's tests, which render every page.
    private static let shippedLibrary: MustacheLibrary = {
        do {
            return try loadLibrary()
        } catch {
            fatalError("the web app's templates do not parse: \(error)")
        }
    }()

    /// The templates shipped with the server, timing each render into `metrics`.
    static func shipped(metrics: ServerMetrics?) -> PageRenderer {
        PageRenderer(library: shippedLibrary, metrics: metrics)
    }

    /// Renders `template` with `context` into an HTML response.
    func render(_ template: String, _ context: Any, status: HTTPResponse.Status = .ok) -> Response {
        let started = ContinuousClock.now
        let html = library.render(Self.mustacheValue(context) ?? context, withTemplate: template) ?? ""
        metrics?.recordPageRender(template: template, nanoseconds: (ContinuousClock.now - started).inNanoseconds)
        return Response(status: status, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// `value` as swift-mustache reads it fastest: this module's view structs become `[String: Any]` (their fields,
    /// prepared the same way; a nil field is left out, which mustache reads as the nil it was), arrays are prepared
    /// element by element, an optional is its value or nil, anything else is unchanged.
    ///
    /// swift-mustache finds `{{name}}` in a struct by reflecting the whole struct again for every name it looks up,
    /// and looks through every enclosing object for names it does not find; a dictionary answers from a hash. On the
    /// leaderboard page (25 rows) reflection took 70 % of the server's CPU (`gamecenter-bench app`).
    ///
    /// A view that answers its names itself (``MustacheParent``, the leaderboard page's) is left as it is: reflecting
    /// it costs more than rendering it.
    static func mustacheValue(_ value: Any) -> Any? {
        if value is any MustacheParent { return value }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct where String(reflecting: type(of: value)).hasPrefix("GameCenterServer."):
            var fields: [String: Any] = [:]
            for child in mirror.children {
                if let label = child.label, let field = mustacheValue(child.value) { fields[label] = field }
            }
            return fields
        case .collection:
            return mirror.children.map { mustacheValue($0.value) ?? $0.value }
        case .optional:
            return mirror.children.first.flatMap { mustacheValue($0.value) }
        default:
            return value
        }
    }

    /// Pages are never cached (they hold the player's data and form tokens), run no script, load only this
    /// server's style sheet and images, submit forms only here, and cannot be framed by another site.
    static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8",
        .cacheControl: "no-store",
        .contentSecurityPolicy:
            "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        .xContentTypeOptions: "nosniff",
        .referrerPolicy: "same-origin",
    ]

    private static func loadLibrary() throws -> MustacheLibrary {
        guard let folder = Bundle.module.url(forResource: "templates", withExtension: nil, subdirectory: "Resources") else {
            return MustacheLibrary()
        }
        var library = MustacheLibrary()
        MustacheContentTypes.register(PageHTMLEscaping(), named: PageHTMLEscaping.name)
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        where file.pathExtension == "mustache" {
            let template = "{{% CONTENT_TYPE:\(PageHTMLEscaping.name)}}" + (try String(contentsOf: file, encoding: .utf8))
            try library.register(template, named: file.deletingPathExtension().lastPathComponent)
        }
        return library
    }
}

/// Text a view answers a `{{name}}` with, written escaped as any other. swift-mustache writes a
/// ``MustacheCustomRenderable`` as soon as it recognizes one; a `String` or an `Int` it first tries as a lambda, then
/// describes and unwraps through further casts of `Any`, each a lookup in the runtime's conformance cache (the casts
/// were a fifth of the server's CPU on the leaderboard page).
struct PageText: MustacheCustomRenderable {
    /// The text, before escaping.
    let renderText: String
    /// Never empty for a section: text is a value, not an absence.
    var isNull: Bool { false }

    init(_ text: String) { renderText = text }
}

/// swift-mustache's HTML escaping (`&`, `<`, `>`, `"`, `'`), done on UTF-8 bytes: the library's own goes character
/// by character through a dictionary, and was an eighth of the leaderboard page's rendering.
struct PageHTMLEscaping: MustacheContentType {
    /// The name the templates select it by.
    static let name = "PAGE_HTML"

    func escapeText(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.contains(where: { Self.replacement($0) != nil }) else { return nil }
            var escaped: [UInt8] = []
            escaped.reserveCapacity(bytes.count + 32)
            for byte in bytes {
                if let replacement = Self.replacement(byte) { escaped.append(contentsOf: replacement.utf8) } else { escaped.append(byte) }
            }
            return String(decoding: escaped, as: UTF8.self)
        } ?? text
    }

    private static func replacement(_ byte: UInt8) -> String? {
        switch byte {
        case UInt8(ascii: "&"): "&amp;"
        case UInt8(ascii: "<"): "&lt;"
        case UInt8(ascii: ">"): "&gt;"
        case UInt8(ascii: "\""): "&quot;"
        case UInt8(ascii: "'"): "&#39;"
        default: nil
        }
    }
}

extension HTTPField.Name {
    /// How much of the page's address other sites are told.
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
