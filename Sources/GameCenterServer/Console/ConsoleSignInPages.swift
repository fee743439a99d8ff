import Hummingbird

/// The console's sign-in and sign-out. The throttle and the password check are ``ConsoleUsers``'s.
struct ConsoleSignInPages: Sendable {
    let users: ConsoleUsers
    let responder: ConsoleResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.signIn(
            "console/sign-in", on: router,
            get: { page in renderer.render("console-sign-in", SignInForm(chrome: ConsoleChrome("Sign in to the studio console", for: page), name: "")) },
            post: { page in try await signIn(page) })
        responder.post("console/sign-out", on: router, nil) { page in
            try await users.signOut(page.requireSession())
            var response = PageRequest.redirect(to: "/console/sign-in")
            response.setCookie(responder.removingSessionCookie(for: page.request, context: page.context))
            return response
        }
    }

    private func signIn(_ page: ConsoleRequest) async throws -> Response {
        let name = page.field("name")
        do {
            let (token, _) = try await users.signIn(name: name, password: page.form["password"] ?? "", from: ClientAddress(page.context.remoteAddress))
            var response = PageRequest.redirect(to: "/console/players")
            response.setCookie(responder.sessionCookie(token, for: page.request, context: page.context))
            return response
        } catch let error as APIError {
            var form = SignInForm(chrome: ConsoleChrome("Sign in to the studio console", for: page), name: name)
            form.error = error.message
            var response = renderer.render("console-sign-in", form, status: error.status)
            if let retry = error.retryAfterSeconds { response.headers[.retryAfter] = String(retry) }
            return response
        }
    }

    /// The sign-in form's content.
    struct SignInForm {
        let chrome: ConsoleChrome
        /// The name typed before (never the password).
        let name: String
        /// Why the last attempt failed.
        var error: String?
    }
}
