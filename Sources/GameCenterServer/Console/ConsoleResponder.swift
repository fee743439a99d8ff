import Foundation
import Hummingbird

/// Routes the console's pages: resolves the console's own session cookie (never a player's), sends signed-out
/// readers to the sign-in page, refuses forms without their CSRF token (403) and actions the user's role may not take
/// (403, naming the role needed), and answers errors with the console's error page.
struct ConsoleResponder: Sendable {
    /// Who may open a page.
    enum Access: Sendable {
        /// Signed-in console users; others are sent to the sign-in page.
        case signedIn
        /// Readers not signed in (the sign-in page); signed-in users are sent to the console.
        case signedOut
        /// Anyone (the page for an unknown address).
        case anyone
    }

    /// The cookie holding a console session's bearer token (`Path=/console`: the player's app never receives it).
    static let cookieName = "gc_console"

    let users: ConsoleUsers
    let cookies: SessionCookies
    let renderer: PageRenderer

    /// Adds `GET path` for signed-in console users.
    func get(_ path: RouterPath, on router: Router<AppRequestContext>, _ handler: @escaping @Sendable (ConsoleRequest) async throws -> Response) {
        router.get(path) { request, context in await respond(request, context, access: .signedIn, isForm: false, action: nil, handler) }
    }

    /// Adds `POST path` for a form of signed-in console users whose role allows `action` (any role when nil), of at
    /// most `formBytes`.
    func post(
        _ path: RouterPath, on router: Router<AppRequestContext>, _ action: ConsoleAction?, formBytes: Int = SubmittedForm.maximumBytes,
        _ handler: @escaping @Sendable (ConsoleRequest) async throws -> Response
    ) {
        router.post(path) { request, context in
            await respond(request, context, access: .signedIn, isForm: true, action: action, formBytes: formBytes, handler)
        }
    }

    /// Adds the signed-out sign-in page and its form.
    func signIn(
        _ path: RouterPath, on router: Router<AppRequestContext>, get: @escaping @Sendable (ConsoleRequest) async throws -> Response,
        post: @escaping @Sendable (ConsoleRequest) async throws -> Response
    ) {
        router.get(path) { request, context in await respond(request, context, access: .signedOut, isForm: false, action: nil, get) }
        router.post(path) { request, context in await respond(request, context, access: .signedOut, isForm: true, action: nil, post) }
    }

    /// The console's session cookie for `token`.
    func sessionCookie(_ token: String, for request: Request, context: AppRequestContext) -> Cookie {
        Cookie(
            name: Self.cookieName, value: token, maxAge: Int(ConsoleUsers.sessionLifetimeMillis / 1000), path: "/console",
            secure: cookies.isSecure(request, context: context), httpOnly: true, sameSite: .strict)
    }

    /// A cookie that makes the browser forget the console session.
    func removingSessionCookie(for request: Request, context: AppRequestContext) -> Cookie {
        Cookie(
            name: Self.cookieName, value: "", maxAge: 0, path: "/console", secure: cookies.isSecure(request, context: context), httpOnly: true,
            sameSite: .strict)
    }

    /// The console's page for an address under `/console` no route has (``APIError/pageNotFound(_:)``), with the
    /// reader's console chrome.
    func notFoundPage(_ request: Request, _ context: AppRequestContext) async -> Response {
        await respond(request, context, access: .anyone, isForm: false, action: nil) { page in throw APIError.pageNotFound(page.request.uri.path) }
    }

    /// The console's error page for `error`, with the status the JSON API would answer.
    func errorPage(_ error: any Error, for page: ConsoleRequest) -> Response {
        let apiError = ErrorClassifier.classify(error, path: page.request.uri.path, logger: page.context.logger)
        let title =
            switch apiError.code {
            case .consoleRoleRequired: "Not allowed for your role"
            case .requestUnknownRoute: "Page not found"
            default: "Something went wrong"
            }
        var response = renderer.render(
            "console-error", ConsoleErrorPage(chrome: ConsoleChrome(title, for: page), message: apiError.message, status: Int(apiError.status.code)),
            status: apiError.status)
        if let retry = apiError.retryAfterSeconds { response.headers[.retryAfter] = String(retry) }
        return response
    }

    private func respond(
        _ request: Request, _ context: AppRequestContext, access: Access, isForm: Bool, action: ConsoleAction?,
        formBytes: Int = SubmittedForm.maximumBytes, _ handler: @Sendable (ConsoleRequest) async throws -> Response
    ) async -> Response {
        let existingFormToken = request.cookies[SessionCookies.signedOutFormName]?.value ?? ""
        let formToken = existingFormToken.isEmpty ? CSRFToken.newSignedOutToken() : existingFormToken
        let cookieToken = request.cookies[Self.cookieName]?.value ?? ""
        var page = ConsoleRequest(request: request, context: context, session: nil, form: .empty, signedOutFormToken: formToken)
        var response: Response
        do {
            let session = cookieToken.isEmpty ? nil : try await users.session(token: cookieToken)
            page = ConsoleRequest(request: request, context: context, session: session, form: .empty, signedOutFormToken: formToken)
            if access == .signedIn && session == nil {
                response = PageRequest.redirect(to: "/console/sign-in")
            } else if access == .signedOut && session != nil {
                response = PageRequest.redirect(to: "/console")
            } else if isForm {
                let form = try await SubmittedForm.read(request, upTo: formBytes)
                guard CSRFToken.matches(form["csrf"], expected: session?.csrfToken ?? existingFormToken) else { throw APIError.formRejected }
                page = ConsoleRequest(request: request, context: context, session: session, form: form, signedOutFormToken: formToken)
                if let action, let session, !session.role.allows(action.role) { throw APIError.consoleRoleRequired(action, has: session.role) }
                response = try await handler(page)
            } else {
                response = try await handler(page)
            }
            if !cookieToken.isEmpty && session == nil { response.setCookie(removingSessionCookie(for: request, context: context)) }
        } catch {
            response = errorPage(error, for: page)
        }
        if existingFormToken.isEmpty { response.setCookie(cookies.signedOutForm(formToken, for: request, context: context)) }
        return response
    }
}

/// What a console page handler is given: the request, who is signed in, and the submitted form.
struct ConsoleRequest: Sendable {
    let request: Request
    let context: AppRequestContext
    /// The signed-in console session; handlers of signed-in pages always have one.
    let session: ConsoleSession?
    /// The submitted form (its CSRF token checked); empty for GET.
    let form: SubmittedForm
    /// The token signed-out forms carry.
    let signedOutFormToken: String

    /// The signed-in session.
    func requireSession() throws -> ConsoleSession {
        guard let session else { throw APIError.notAuthenticated }
        return session
    }

    /// The query parameter `name`, if present and not empty.
    func query(_ name: String) -> String? {
        request.uri.queryParameters.get(name).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A form field, trimmed; empty when not sent.
    func field(_ name: String) -> String {
        (form[name] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether the signed-in user may take `action` (to show its form).
    func may(_ action: ConsoleAction) -> Bool {
        session?.role.allows(action.role) ?? false
    }
}

/// The console's error page.
struct ConsoleErrorPage {
    let chrome: ConsoleChrome
    /// What went wrong and what to do.
    let message: String
    /// The HTTP status, shown small.
    let status: Int
}
