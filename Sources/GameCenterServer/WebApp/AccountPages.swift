import Foundation
import GameCenterProtocol
import Hummingbird

/// The account pages: sign up, sign in, sign out (here or everywhere), and the account page with the profile form,
/// the password change, the player's sessions, each revocable, and the download of all their data. Every rule and the sign-in throttle are
/// ``AccountService``'s.
struct AccountPages: Sendable {
    let accounts: AccountService
    let archive: ArchiveDownload
    let registry: GameRegistry
    let cookies: SessionCookies
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("sign-in", on: router, .anyone) { page in
            page.session != nil ? PageRequest.redirect(to: Self.next(page) ?? "/") : renderer.render("sign-in", SignInForm(page))
        }
        responder.post("sign-in", on: router, .anyone) { page in try await signIn(page) }
        responder.get("sign-up", on: router, .anyone) { page in
            page.session != nil ? PageRequest.redirect(to: Self.next(page) ?? "/") : renderer.render("sign-up", SignUpForm(page))
        }
        responder.post("sign-up", on: router, .anyone) { page in try await signUp(page) }
        responder.post("sign-out", on: router, .signedIn) { page in
            try await accounts.signOut(page.requireSession().session)
            return signedOut(page)
        }
        responder.post("sign-out-everywhere", on: router, .signedIn) { page in
            let session = try page.requireSession().session
            _ = try await accounts.revokeOthers(session)
            try await accounts.signOut(session)
            return signedOut(page)
        }
        responder.get("account", on: router, .signedIn) { page in try await accountPage(page) }
        responder.post("account/profile", on: router, .signedIn) { page in
            let request = UpdateProfileRequest(alias: page.form["alias"] ?? "", status: page.form["status"] ?? "")
            do {
                _ = try await accounts.updateProfile(request, session: page.requireSession().session)
            } catch let error as APIError {
                return try await accountPage(page, error: error, typed: request)
            }
            return PageRequest.redirect(to: "/account?saved=profile")
        }
        responder.post("account/password", on: router, .signedIn) { page in
            let request = ChangePasswordRequest(currentPassword: page.form["current"] ?? "", newPassword: page.form["new"] ?? "")
            do {
                _ = try await accounts.changePassword(
                    request, session: page.requireSession().session, from: ClientAddress(page.context.remoteAddress))
            } catch let error as APIError {
                return try await accountPage(page, error: error)
            }
            return PageRequest.redirect(to: "/account?saved=password")
        }
        responder.post("account/data", on: router, .signedIn) { page in
            try await archive.response(playerID: page.requireSession().session.playerID)
        }
        responder.post("account/sessions/revoke", on: router, .signedIn) { page in
            let session = try page.requireSession().session
            let id = page.form["session"] ?? ""
            do {
                if id == session.sessionID {
                    try await accounts.signOut(session)
                    return signedOut(page)
                }
                try await accounts.revoke(sessionID: id, by: session)
            } catch let error as APIError {
                return try await accountPage(page, error: error)
            }
            return PageRequest.redirect(to: "/account?saved=revoked")
        }
    }

    private func signIn(_ page: PageRequest) async throws -> Response {
        let request = SignInRequest(account: page.form["account"] ?? "", password: page.form["password"] ?? "")
        do {
            let environment = try Self.environment(page.form["environment"])
            let opened = try await accounts.signIn(
                request, device: WebAppClient.device(environment: environment),
                from: ClientAddress(page.context.remoteAddress))
            return signedIn(opened, page)
        } catch let error as APIError {
            var form = SignInForm(page)
            form.error = error.message
            return renderer.render("sign-in", form, status: error.status)
        }
    }

    private func signUp(_ page: PageRequest) async throws -> Response {
        let request = SignUpRequest(
            account: page.form["account"] ?? "", password: page.form["password"] ?? "", alias: page.form["alias"] ?? "",
            underage: page.form["underage"] == "on")
        do {
            let environment = try Self.environment(page.form["environment"])
            return signedIn(
                try await accounts.signUp(
                    request, device: WebAppClient.device(environment: environment),
                    from: ClientAddress(page.context.remoteAddress)), page)
        } catch let error as APIError {
            var form = SignUpForm(page)
            form.error = error.message
            return renderer.render("sign-up", form, status: error.status)
        }
    }

    /// The environment a sign-in form chose: `live` unless it says `sandbox`.
    private static func environment(_ field: String?) throws -> GameCenterProtocol.Environment {
        guard let field, !field.isEmpty else { return .live }
        guard let environment = GameCenterProtocol.Environment(rawValue: field) else {
            throw APIError.invalidPageParameter("environment", allowed: "'live' or 'sandbox'")
        }
        return environment
    }

    /// Where to go after signing in: a page that sent the player to sign in first (`next`, a game's sign-in page
    /// only: nothing else may choose where a sign-in leads).
    static func next(_ page: PageRequest) -> String? {
        guard let next = page.form["next"] ?? page.query("next"), next.hasPrefix(DeviceSignInPages.pathPrefix), next.count <= 120,
            next.dropFirst(DeviceSignInPages.pathPrefix.count).allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else { return nil }
        return next
    }

    private func signedIn(_ opened: SessionResponse, _ page: PageRequest) -> Response {
        var response = PageRequest.redirect(to: Self.next(page) ?? "/")
        let lifetime = Int(opened.expiresAt.timeIntervalSinceNow.rounded(.down))
        response.setCookie(cookies.session(token: opened.token, lifetime: lifetime, for: page.request, context: page.context))
        return response
    }

    private func signedOut(_ page: PageRequest) -> Response {
        var response = PageRequest.redirect(to: "/")
        response.setCookie(cookies.removing(SessionCookies.sessionName, for: page.request, context: page.context))
        return response
    }

    private func accountPage(_ page: PageRequest, error: APIError? = nil, typed: UpdateProfileRequest? = nil) async throws -> Response {
        let session = try page.requireSession()
        let profile = try await accounts.me(session.session, device: session.device)
        let listed = try await accounts.sessions(session.session)
        // This browser first, then the others oldest first.
        let sessions = (listed.filter(\.current) + listed.filter { !$0.current }).map { info in
            AccountPage.Device(
                id: info.sessionID,
                name: info.bundleID == WebAppClient.bundleID ? "Web browser" : registry.game(bundleID: info.bundleID)?.name ?? info.bundleID,
                signedIn: PageDates.minute(info.createdAt), expires: PageDates.day(info.expiresAt), current: info.current)
        }
        let saved: String? =
            switch page.query("saved") {
            case "profile": "Your profile was saved."
            case "revoked": "That session was signed out."
            case "password": "Your password was changed. Every other session was signed out: sign in again there with the new one."
            default: nil
            }
        let content = AccountPage(
            chrome: PageChrome("Your account", section: .account, for: page), alias: typed?.alias ?? profile.alias,
            status: typed?.status ?? profile.status ?? "", environment: session.environment.rawValue, sessions: sessions,
            error: error?.message, saved: error == nil ? saved : nil)
        return renderer.render("account", content, status: error?.status ?? .ok)
    }
}

/// The sign-in form's content.
struct SignInForm {
    let chrome: PageChrome
    /// The account name typed before (never the password).
    let account: String
    /// Whether sandbox was chosen.
    let sandbox: Bool
    /// Why the last attempt failed.
    var error: String?
    /// The page to go to once signed in (``AccountPages/next(_:)``).
    let next: String?

    init(_ page: PageRequest) {
        self.chrome = PageChrome("Sign in", for: page)
        self.next = AccountPages.next(page)
        self.account = page.form["account"] ?? ""
        self.sandbox = page.form["environment"] == "sandbox"
    }
}

/// The sign-up form's content.
struct SignUpForm {
    /// The account rules' lengths, as the form's help tells them.
    struct Lengths {
        let account = "\(Limits.accountNameLength.lowerBound) to \(Limits.accountNameLength.upperBound)"
        let accountMax = Limits.accountNameLength.upperBound
        let password = "\(Limits.passwordLength.lowerBound) to \(Limits.passwordLength.upperBound)"
        let alias = "\(Limits.aliasLength.lowerBound) to \(Limits.aliasLength.upperBound)"
        let aliasMax = Limits.aliasLength.upperBound
    }

    let chrome: PageChrome
    let limits = Lengths()
    /// What was typed before (never the password).
    let account: String, alias: String
    /// Whether sandbox was chosen.
    let sandbox: Bool
    /// Whether the player said they are underage.
    let underage: Bool
    /// Why the last attempt failed.
    var error: String?
    /// The page to go to once signed up (``AccountPages/next(_:)``).
    let next: String?

    init(_ page: PageRequest) {
        self.chrome = PageChrome("Create your account", for: page)
        self.next = AccountPages.next(page)
        self.underage = page.form["underage"] == "on"
        self.account = page.form["account"] ?? ""
        self.alias = page.form["alias"] ?? ""
        self.sandbox = page.form["environment"] == "sandbox"
    }
}

/// The account page's content.
struct AccountPage {
    /// One of the player's signed-in devices or browsers.
    struct Device {
        /// The session id (the revoke form's field; not a secret).
        let id: String
        /// The game's name, or "Web browser".
        let name: String
        let signedIn: String, expires: String
        /// Whether it is the session showing this page.
        let current: Bool
    }

    let chrome: PageChrome
    let alias: String, status: String
    /// The longest alias and status message the account rules take.
    let aliasMax = Limits.aliasLength.upperBound, statusMax = Limits.maximumStatusLength
    /// The password lengths the account rules take.
    let passwordMin = Limits.passwordLength.lowerBound, passwordMax = Limits.passwordLength.upperBound
    let environment: String
    let sessions: [Device]
    let error: String?
    let saved: String?
}
