import Crypto
import Foundation

/// The tokens forms carry so that the server can tell its own forms from another site's.
///
/// A signed-in session's token is HMAC-SHA256 of the session id, keyed with the session's own bearer token: only
/// the server (which receives that token in the `HttpOnly` cookie with every request) and nobody reading the page
/// from another site can compute it, it is bound to the one session, and it needs no server secret shared between
/// nodes or kept across restarts. Before sign-in, forms carry a random value that is also set in a cookie (a double
/// submit): another site can neither read nor set it.
enum CSRFToken {
    /// The token of a signed-in session's forms.
    static func forSession(token: String, sessionID: String) -> String {
        let key = SymmetricKey(data: Data(token.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data("csrf:\(sessionID)".utf8), using: key)
        return Data(mac).base64URLEncoded
    }

    /// A fresh random value for the signed-out forms' cookie.
    static func newSignedOutToken() -> String {
        Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }).base64URLEncoded
    }

    /// Whether the presented token equals the expected one; compares in time independent of where they differ.
    static func matches(_ presented: String?, expected: String) -> Bool {
        guard let presented, !expected.isEmpty else { return false }
        let a = Data(SHA256.hash(data: Data(presented.utf8))), b = Data(SHA256.hash(data: Data(expected.utf8)))
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
