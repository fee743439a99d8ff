import Hummingbird

/// What a page handler is given: the request, who is signed in, the submitted form, and the reader's languages.
struct PageRequest: Sendable {
    /// The HTTP request.
    let request: Request
    /// Its context (peer address, route parameters).
    let context: AppRequestContext
    /// The signed-in page session, if any.
    let session: PageSession?
    /// The submitted form (already checked for its CSRF token); empty for GET.
    let form: SubmittedForm
    /// The reader's languages.
    let locale: PageLocale
    /// The token signed-out forms carry (the value of the signed-out forms' cookie).
    let signedOutFormToken: String
    /// Whether the server is winding down (``GameCenterApp/Configuration/readOnly``): every page says so.
    var readOnly = false

    /// The signed-in session; pages for signed-in players are only routed with one.
    func requireSession() throws -> PageSession {
        guard let session else { throw APIError.notAuthenticated }
        return session
    }

    /// The query parameter `name`, if present.
    func query(_ name: String) -> String? {
        request.uri.queryParameters.get(name)
    }

    /// A `303 See Other` to `path` (after a form, or to the sign-in page).
    static func redirect(to path: String) -> Response {
        Response(status: .seeOther, headers: [.location: path])
    }
}
