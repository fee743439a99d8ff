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

    /// A cookie that makes the browser forget the one named.
    func removing(_ name: String, for request: Request, context: AppRequestContext) -> Cookie {
        cookie(name, "", maxAge: 0, request: request, context: context)
    }

    /// Whether the request reached the server over TLS, as far as the server may believe.
    func isSecure(_ request: Request, context: AppRequestContext) -> Bool {
        if alwaysSecure { return true }
        guard Self.isLoopback(context.remoteAddress) else { return false }
        return request.headers[.xForwardedProto]?.lowercased() == "https"
    }

    private func cookie(_ name: String, _ value: String, maxAge: Int?, request: Request, context: AppRequestContext) -> Cookie {
        Cookie(
            name: name, value: value, maxAge: maxAge, path: "/", secure: isSecure(request, context: context), httpOnly: true,
            sameSite: .lax)
    }

    private static func isLoopback(_ address: SocketAddress?) -> Bool {
        switch address {
        case .v4(let v4): return withUnsafeBytes(of: v4.address.sin_addr) { $0[0] == 127 }
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            return bytes == [UInt8](repeating: 0, count: 15) + [1]
                || (bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127)
        default: return false
        }
    }
}

extension HTTPField.Name {
    /// The scheme a reverse proxy received the request with.
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}
