import Foundation

/// `POST /v1/identity-verification`: what a game sends its own server so that server can check who the signed-in
/// player is, as GameKit's `fetchItems(forIdentityVerificationSignature:)` answers.
///
/// The game server downloads the X.509 certificate at `publicKeyURL` and checks `signature` (RSA PKCS #1 v1.5 with
/// SHA-256) over the player id (UTF-8), the bundle id (UTF-8), `timestamp` (8 bytes, big-endian) and `salt`, as it
/// checks Apple's; or it checks `identityToken`, an ES256 JSON Web Token, against the keys at
/// `/.well-known/jwks.json`.
public struct IdentityVerificationItems: Codable, Sendable, Equatable {
    /// Where the signing certificate is (DER).
    public var publicKeyURL: String
    /// The signature, base64 in JSON.
    public var signature: Data
    /// 32 random bytes signed with the rest, base64 in JSON.
    public var salt: Data
    /// When the signature was made, in milliseconds since 1970.
    public var timestamp: UInt64
    /// A JSON Web Token (ES256): `sub` the player id, `aud` the bundle id, `iss` this server, `iat`, `exp` 10 minutes on,
    /// `environment`.
    public var identityToken: String

    /// The items as the server answers them.
    public init(publicKeyURL: String, signature: Data, salt: Data, timestamp: UInt64, identityToken: String) {
        self.publicKeyURL = publicKeyURL
        self.signature = signature
        self.salt = salt
        self.timestamp = timestamp
        self.identityToken = identityToken
    }

    /// The bytes `signature` signs: player id, bundle id, timestamp (big-endian), salt.
    public static func signedBytes(playerID: String, bundleID: String, timestamp: UInt64, salt: Data) -> Data {
        var bytes = Data(playerID.utf8)
        bytes.append(contentsOf: Data(bundleID.utf8))
        withUnsafeBytes(of: timestamp.bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(salt)
        return bytes
    }
}
