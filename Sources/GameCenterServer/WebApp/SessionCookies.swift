import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The web app's cookies: the page session's bearer token, and before sign-in the value signed-out forms carry.
///
/// Both are `HttpOnly; SameSite=Lax; Path=/`, and `Secure` when the request came over TLS: always with
/// `--secure-cookies`, otherwise when a reverse proxy on this host (a loopback peer — the one peer trusted to say
/// so) forwarded it with `X-Forwarded-Proto: https`. A session token never appears in a URL.
struct SessionCookies: Sendable {
    /// The cookie holding the page session's token.
    static let sessionName = "gc_session"
    /// The cookie holding the signed-out forms' token.
    static let signedOutFormName = "gc_form"

    /// Marks every cookie `Secure` (`--secure-cookies`).
    let alwaysSecure: Bool

    /// The session cookie for a token that expires in `seconds`.
    func session(token: String, lifetime seconds: Int, for request: Request, context: AppRequestContext) -> Cookie {
        cookie(Self.sessionName, token, maxAge: max(seconds, 0), request: request, context: context)
    }

    /// The cookie for the signed-out forms' token (ends with the browser session).
    func signedOutForm(_ value: String, for request: Request, context: AppRequestContext) -> Cookie {
        cookie(Self.signedOutFormName, value, maxAge: nil, request: request, context: context)
    }

    /// The cookie naming the screen a game presented in this browser (``ScreenPresentations``), for at most
    /// ``ScreenPresentations/cookieLifetimeSeconds``.
    func presentation(_ presentationID: String, for request: Request, context: AppRequestContext) -> Cookie {
        cookie(
            ScreenPresentations.cookieName, presentationID, maxAge: ScreenPresentations.cookieLifetimeSeconds, request: request,
            context: context)
    }

    /// A cookie that makes the browser forget the one named.
    func removing(_ name: String, for request: Request, context: AppRequestContext) -> Cookie {
        cookie(name, "", maxAge: 0, request: request, context: context)
    }

    /// Whether the request reached the server over TLS, as far as the server may believe.
    func isSecure(_ request: Request, context: AppRequestContext) -> Bool {
        if alwaysSecure { return true }
        guard ClientAddress.isLoopback(context.remoteAddress) else { return false }
        return request.headers[.xForwardedProto]?.lowercased() == "https"
    }

    private func cookie(_ name: String, _ value: String, maxAge: Int?, request: Request, context: AppRequestContext) -> Cookie {
        Cookie(
            name: name, value: value, maxAge: maxAge, path: "/", secure: isSecure(request, context: context), httpOnly: true,
            sameSite: .lax)
    }
}

extension HTTPField.Name {
    /// The scheme a reverse proxy received the request with.
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}
