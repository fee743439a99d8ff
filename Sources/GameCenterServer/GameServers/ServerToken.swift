import Crypto
import Foundation

/// A game server's bearer token, made as App Store Connect's are: a JSON Web Token (RFC 7519) signed with ES256 by
/// the server key's private key, its header naming the key (`kid`), its claims the issuer (`iss`), when it was made
/// (`iat`), when it expires (`exp`, at most 20 minutes later), the audience `appstoreconnect-v1` and optionally the
/// requests it may make (`scope`, such as `"POST /v1/gameCenterLeaderboardEntrySubmissions"`).
///
/// So a studio's server written for Apple's API signs its tokens unchanged with the key id, issuer id and `.p8`
/// file `gamecenter keys create` gave it.
struct ServerToken: Sendable {
    /// The audience every token names.
    static let audience = "appstoreconnect-v1"
    /// The longest a token may live, from `iat` to `exp`, as App Store Connect allows.
    static let maximumLifetimeSeconds: Int64 = 20 * 60
    /// How far the caller's clock may run ahead of the server's.
    static let allowedClockSkewSeconds: Int64 = 60
    /// Longer tokens are refused unread.
    static let maximumLength = 4096

    let keyID: String
    let issuerID: String
    let issuedAt: Int64
    let expiresAt: Int64
    /// The requests the token is limited to ("METHOD /path"), when it names any.
    let scope: [String]?
    /// `header.payload`, as signed.
    private let signingInput: Data
    private let signature: P256.Signing.ECDSASignature

    /// Reads a token's parts, without trusting them yet (``check(at:method:path:)`` and ``isSigned(by:)`` do that).
    init(parsing token: Substring) throws(APIError) {
        guard token.utf8.count <= Self.maximumLength else { throw APIError.keyInvalid("the token is longer than \(Self.maximumLength) bytes") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw APIError.keyInvalid("the token is not a JSON Web Token (three base64url parts joined by dots)") }
        guard let headerData = Data(base64URLEncoded: parts[0]), let header = try? JSONDecoder().decode(Header.self, from: headerData) else {
            throw APIError.keyInvalid("the token's header is not base64url JSON with alg and kid")
        }
        guard header.alg == "ES256" else { throw APIError.keyInvalid("the token is signed with '\(header.alg.prefix(20))'; only ES256 is taken") }
        guard let claimsData = Data(base64URLEncoded: parts[1]), let claims = try? JSONDecoder().decode(Claims.self, from: claimsData) else {
            throw APIError.keyInvalid("the token's claims are not base64url JSON with iss, iat, exp and aud (iat and exp whole seconds)")
        }
        guard let signatureData = Data(base64URLEncoded: parts[2]), signatureData.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData)
        else { throw APIError.keyInvalid("the token's signature is not an ES256 signature (64 bytes, base64url)") }
        guard claims.aud == Self.audience else {
            throw APIError.keyInvalid("the token's audience (aud) must be '\(Self.audience)'")
        }
        keyID = header.kid
        issuerID = claims.iss
        issuedAt = claims.iat ?? claims.exp - Self.maximumLifetimeSeconds
        expiresAt = claims.exp
        scope = claims.scope
        signingInput = Data(token[..<parts[1].endIndex].utf8)
        self.signature = signature
    }

    /// Refuses a token that is not valid at `now` (seconds since 1970) or whose scope leaves out this request.
    func check(at now: Int64, method: String, path: String) throws(APIError) {
        guard expiresAt > now else { throw APIError.keyInvalid("the token expired \(now - expiresAt) s ago (exp); make a new one") }
        guard issuedAt <= now + Self.allowedClockSkewSeconds else {
            throw APIError.keyInvalid("the token was made in the future (iat \(issuedAt - now) s ahead of the server's clock)")
        }
        guard expiresAt - issuedAt <= Self.maximumLifetimeSeconds, expiresAt <= now + Self.maximumLifetimeSeconds + Self.allowedClockSkewSeconds
        else { throw APIError.keyInvalid("a token may live at most 20 minutes (exp - iat ≤ 1200 s)") }
        if let scope {
            let request = "\(method) \(path)"
            guard scope.contains(where: { $0 == request || $0.hasPrefix(request + "?") }) else {
                throw APIError.keyForbidden("the token's scope does not include '\(request.prefix(200))'")
            }
        }
    }

    /// Whether the token was signed by the private half of `key`.
    func isSigned(by key: P256.Signing.PublicKey) -> Bool {
        key.isValidSignature(signature, for: signingInput)
    }

    /// A token for `keyID`, signed with `privateKey`, valid from `issuedAt` (seconds since 1970) for `lifetime` seconds:
    /// what `gamecenter keys token` prints, and what a studio's server makes.
    static func make(keyID: String, issuerID: String, privateKey: P256.Signing.PrivateKey, issuedAt: Int64, lifetime: Int64) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let header = try encoder.encode(Header(alg: "ES256", kid: keyID, typ: "JWT")).base64URLEncoded
        let claims = try encoder.encode(Claims(iss: issuerID, iat: issuedAt, exp: issuedAt + lifetime, aud: audience, scope: nil)).base64URLEncoded
        let input = "\(header).\(claims)"
        let signature = try privateKey.signature(for: Data(input.utf8))
        return "\(input).\(signature.rawRepresentation.base64URLEncoded)"
    }

    private struct Header: Codable {
        var alg: String
        var kid: String
        var typ: String?
    }

    private struct Claims: Codable {
        var iss: String
        var iat: Int64?
        var exp: Int64
        var aud: String
        var scope: [String]?
    }
}

/// Makes the tokens game-server routes take (what `gamecenter keys token` prints), for tools and tests.
public enum ServerKeyTokens {
    /// A token of key `keyID` and issuer `issuerID`, signed with the key's private key (`privateKeyPEM`, the PEM
    /// `gamecenter keys create` printed), made `issuedAt` (seconds since 1970; now by default) and valid for `lifetime`
    /// seconds (at most 1200).
    public static func make(keyID: String, issuerID: String, privateKeyPEM: String, issuedAt: Int64? = nil, lifetime: Int64 = 1200) throws -> String {
        let key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        return try ServerToken.make(
            keyID: keyID, issuerID: issuerID, privateKey: key, issuedAt: issuedAt ?? Int64(Date().timeIntervalSince1970), lifetime: lifetime)
    }
}

extension APIError {
    /// A game-server route called without a token.
    static let keyRequired = APIError(
        .keyRequired, "game-server routes need Authorization: Bearer TOKEN, a JSON Web Token signed with a server key (ES256)")

    /// A token that cannot be trusted, and why.
    static func keyInvalid(_ why: String) -> APIError {
        APIError(.keyInvalid, "the server key token was refused: \(why)")
    }

    /// A trusted token that may not do this, and why.
    static func keyForbidden(_ why: String) -> APIError {
        APIError(.keyForbidden, "the server key may not do this: \(why)")
    }
}
