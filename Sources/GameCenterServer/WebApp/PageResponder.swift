import GameCenterProtocol
import GameCenterStorage
import Hummingbird
import Logging

/// Routes pages: resolves the session cookie, sends signed-out readers of private pages to sign in, refuses forms
/// without their CSRF token (403), and answers the errors a page throws with an error page of the same status.
struct PageResponder: Sendable {
    /// Who may open a page.
    enum Access: Sendable {
        /// Anyone, signed in or not.
        case anyone
        /// Signed-in players; others are sent to the sign-in page.
        case signedIn
    }

    /// The account rules, which tell live sessions.
    let accounts: AccountService
    /// The cookies pages set.
    let cookies: SessionCookies
    /// The templates.
    let renderer: PageRenderer
    /// Follows the pages games presented: each one shown is told to the game.
    let presentations: ScreenPresentations
    /// Refuses forms that write (wind-down mode), as ``ReadOnlyMiddleware`` refuses API writes.
    let readOnly: Bool

    /// Adds `GET path`.
    func get(
        _ path: RouterPath, on router: Router<AppRequestContext>, _ access: Access,
        _ handler: @escaping @Sendable (PageRequest) async throws -> Response
    ) {
        router.get(path) { request, context in await respond(request, context, access: access, isForm: false, handler) }
    }

    /// Adds `POST path` for a form.
    func post(
        _ path: RouterPath, on router: Router<AppRequestContext>, _ access: Access,
        _ handler: @escaping @Sendable (PageRequest) async throws -> Response
    ) {
        router.post(path) { request, context in await respond(request, context, access: access, isForm: true, handler) }
    }

    /// Renders the error page for `error`, with the status, message and `Retry-After` the JSON API would answer
    /// (``ErrorClassifier``).
    func errorPage(_ error: any Error, for page: PageRequest) -> Response {
        let apiError = ErrorClassifier.classify(error, path: page.request.uri.path, logger: page.context.logger)
        var response = renderer.render(
            "error",
            ErrorPage(
                chrome: PageChrome(apiError.status == .notFound ? "Page not found" : "Something went wrong", for: page), message: apiError.message,
                status: Int(apiError.status.code)), status: apiError.status)
        if let retry = apiError.retryAfterSeconds { response.headers[.retryAfter] = String(retry) }
        return response
    }

    /// The error page for an address no route has (``APIError/pageNotFound(_:)``), with the reader's session chrome.
    func notFoundPage(_ request: Request, _ context: AppRequestContext) async -> Response {
        await respond(request, context, access: .anyone, isForm: false) { page in throw APIError.pageNotFound(page.request.uri.path) }
    }

    private func respond(
        _ request: Request, _ context: AppRequestContext, access: Access, isForm: Bool,
        _ handler: @Sendable (PageRequest) async throws -> Response
    ) async -> Response {
        let existingFormToken = request.cookies[SessionCookies.signedOutFormName]?.value ?? ""
        let formToken = existingFormToken.isEmpty ? CSRFToken.newSignedOutToken() : existingFormToken
        let session: PageSession?, staleCookie: Bool
        do {
            (session, staleCookie) = try await pageSession(request)
        } catch {
            let page = PageRequest(
                request: request, context: context, session: nil, form: .empty, locale: PageLocale(request),
                signedOutFormToken: formToken, readOnly: readOnly)
            return errorPage(error, for: page)
        }
        var page = PageRequest(
            request: request, context: context, session: session, form: .empty, locale: PageLocale(request),
            signedOutFormToken: formToken, readOnly: readOnly)
        var response: Response
        do {
            if access == .signedIn && session == nil {
                response = PageRequest.redirect(to: "/sign-in")
            } else if isForm && readOnly && ReadOnlyMiddleware.refusesForm(path: request.uri.path) {
                throw APIError.readOnly
            } else if isForm {
                let form = try await SubmittedForm.read(request)
                let expected = session?.csrfToken ?? existingFormToken
                guard CSRFToken.matches(form["csrf"], expected: expected) else { throw APIError.formRejected }
                page = PageRequest(
                    request: request, context: context, session: session, form: form, locale: page.locale,
                    signedOutFormToken: formToken, readOnly: readOnly)
                response = try await handler(page)
            } else {
                response = try await handler(page)
                if response.status == .ok, response.headers[.contentType]?.hasPrefix("text/html") == true { await presentations.shown(page) }
            }
        } catch {
            response = errorPage(error, for: page)
        }
        if staleCookie { response.setCookie(cookies.removing(SessionCookies.sessionName, for: request, context: context)) }
        if session == nil && existingFormToken.isEmpty {
            response.setCookie(cookies.signedOutForm(formToken, for: request, context: context))
        }
        return response
    }

    /// The page session the cookie names, and whether the cookie names one that is no longer valid (to clear it).
    /// A database outage is thrown, not taken for a signed-out reader (whose cookie would be cleared).
    private func pageSession(_ request: Request) async throws -> (PageSession?, stale: Bool) {
        guard let token = request.cookies[SessionCookies.sessionName]?.value, !token.isEmpty else { return (nil, false) }
        let record: SessionRecord
        do {
            record = try await accounts.liveSession(token: token)
        } catch let error as APIError where error.status == .unauthorized {
            return (nil, true)
        }
        guard record.bundleID == WebAppClient.bundleID, let environment = GameCenterProtocol.Environment(rawValue: record.environment) else {
            return (nil, true)
        }
        let session = AuthenticatedSession(sessionID: record.sessionID, playerID: record.playerID, expiresAt: record.expiresAt)
        return (
            PageSession(
                session: session, environment: environment,
                csrfToken: CSRFToken.forSession(token: token, sessionID: record.sessionID)), false
        )
    }
}

/// The error page's content.
struct ErrorPage {
    let chrome: PageChrome
    /// What went wrong and what to do.
    let message: String
    /// The HTTP status, shown small.
    let status: Int
}
