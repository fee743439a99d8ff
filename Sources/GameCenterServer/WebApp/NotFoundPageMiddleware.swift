import HTTPTypes
import Hummingbird

/// A browser that asks for an address no route has (`/freinds`, or a form's address reloaded) gets the Game Center
/// app's error page — 404, with the way back — instead of the JSON API's error body. API clients, and anything under
/// the API's prefixes, still get the JSON. Under `/console` the page is the studio console's.
struct NotFoundPageMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    /// Renders the page, with the reader's session chrome.
    let responder: PageResponder
    /// Renders the page under `/console`, with the console user's chrome.
    let console: ConsoleResponder

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && Self.isPageRequest(request.head) {
            let path = request.uri.path
            if path == ConsoleRoutes.pathPrefix || path.hasPrefix(ConsoleRoutes.pathPrefix + "/") { return await console.notFoundPage(request, context) }
            return await responder.notFoundPage(request, context)
        }
    }

    /// The paths under which only the JSON API, the studio's routes and the nodes' own routes live.
    static let apiPrefixes = ["/v1", "/admin", "/internal"]

    /// Whether `head` is a browser asking for a page: a `GET` or `HEAD` that accepts HTML, outside the API's paths.
    static func isPageRequest(_ head: HTTPRequest) -> Bool {
        guard head.method == .get || head.method == .head, let path = head.path?.split(separator: "?").first else { return false }
        for prefix in apiPrefixes where path == prefix || path.hasPrefix(prefix + "/") { return false }
        return head.headerFields[.accept]?.contains("text/html") == true
    }
}
