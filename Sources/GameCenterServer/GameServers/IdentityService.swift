import Crypto
import CryptoExtras
import Foundation
import GameCenterProtocol
import GameCenterStorage
import SwiftASN1
import X509

/// Signs who a signed-in player is, for the studio's game servers: GameKit's identity verification signature (RSA,
/// with the certificate published at `publicKeyURL`) and an identity token (ES256 JWT, its keys at
/// `/.well-known/jwks.json`).
///
/// The keys live in storage, shared by every node; the first request that needs them makes them. Certificates and
/// the key set are read from storage when asked, so any node publishes a key another node made.
actor IdentityService {
    let database: Database
    let clock: ServerClock
    /// The keys this node signs with: loaded (or made) once, by the first request that needs them.
    private var signing: Task<SigningKeys, any Error>?

    /// How long an identity token lives.
    static let tokenLifetimeSeconds: Int64 = 600

    private struct SigningKeys {
        let rsaKeyID: String
        let rsa: _RSA.Signing.PrivateKey
        let es256KeyID: String
        let es256: P256.Signing.PrivateKey
    }

    init(database: Database, clock: ServerClock) {
        self.database = database
        self.clock = clock
    }

    /// The items for `playerID` of `bundleID`; `baseURL` is how callers reach this server (`http://host:port`).
    func items(playerID: String, bundleID: String, environment: Environment, baseURL: String) async throws -> IdentityVerificationItems {
        let keys = try await signingKeys()
        let now = clock.nowMillis()
        let salt = Credentials.randomBytes(32)
        let timestamp = UInt64(now)
        let signed = IdentityVerificationItems.signedBytes(playerID: playerID, bundleID: bundleID, timestamp: timestamp, salt: salt)
        let signature = try keys.rsa.signature(for: signed, padding: .insecurePKCS1v1_5)
        let issuedAt = now / 1000
        let claims = IdentityClaims(
            iss: baseURL, sub: playerID, aud: bundleID, iat: issuedAt, exp: issuedAt + Self.tokenLifetimeSeconds, environment: environment.rawValue)
        return IdentityVerificationItems(
            publicKeyURL: "\(baseURL)/identity/v1/certificates/\(keys.rsaKeyID).cer", signature: signature.rawRepresentation, salt: salt,
            timestamp: timestamp, identityToken: try Self.token(claims, keyID: keys.es256KeyID, key: keys.es256))
    }

    /// The DER certificate of the RSA key `keyID`; nil when there is none.
    func certificate(keyID: String) async throws -> Data? {
        let keys = try await database.read { try await $0.identityKeys() }
        return keys.first { $0.keyID == keyID && $0.kind == "rsa" }?.certificate.flatMap { Data(base64Encoded: $0) }
    }

    /// Every ES256 key as a JSON Web Key Set (RFC 7517).
    func keySet() async throws -> JSONWebKeySet {
        let keys = try await database.read { try await $0.identityKeys() }
        return JSONWebKeySet(
            keys: keys.filter { $0.kind == "es256" }.compactMap { record in
                guard let key = try? P256.Signing.PrivateKey(pemRepresentation: record.privateKey) else { return nil }
                let point = key.publicKey.rawRepresentation
                return .init(
                    kty: "EC", crv: "P-256", x: point.prefix(32).base64URLEncoded, y: point.suffix(32).base64URLEncoded, kid: record.keyID, use: "sig",
                    alg: "ES256")
            })
    }

    private func signingKeys() async throws -> SigningKeys {
        if let signing, let keys = try? await signing.value { return keys }
        // One load at a time (the actor lets others in while this one waits): they all wait for it; a failed one is
        // tried again by the next request.
        let load = Task { try await loadOrMakeKeys() }
        signing = load
        return try await load.value
    }

    private func loadOrMakeKeys() async throws -> SigningKeys {
        var records = try await database.read { try await $0.identityKeys() }
        if !records.contains(where: { $0.kind == "rsa" }) { try await store(try Self.newRSAKey(now: clock.nowMillis())) }
        if !records.contains(where: { $0.kind == "es256" }) {
            try await store(
                IdentityKeyRecord(
                    keyID: Self.newKeyID(), kind: "es256", privateKey: P256.Signing.PrivateKey().pemRepresentation, certificate: nil,
                    createdAt: clock.nowMillis()))
        }
        records = try await database.read { try await $0.identityKeys() }
        // The oldest of each kind: nodes that made keys at the same moment all sign with the same ones.
        guard let rsa = records.first(where: { $0.kind == "rsa" }), let es256 = records.first(where: { $0.kind == "es256" }) else {
            throw APIError.internalError
        }
        return SigningKeys(
            rsaKeyID: rsa.keyID, rsa: try _RSA.Signing.PrivateKey(pemRepresentation: rsa.privateKey), es256KeyID: es256.keyID,
            es256: try P256.Signing.PrivateKey(pemRepresentation: es256.privateKey))
    }

    private func store(_ record: IdentityKeyRecord) async throws {
        try await database.write { try await $0.insertIdentityKey(record) }
    }

    /// A 2048-bit RSA key and its self-signed certificate (ten years).
    private static func newRSAKey(now: Int64) throws -> IdentityKeyRecord {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let keyID = newKeyID()
        let name = try DistinguishedName {
            OrganizationName("OpenGameKit")
            CommonName("Game Center identity \(keyID)")
        }
        let start = Date(timeIntervalSince1970: Double(now) / 1000 - 3600)
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey), notValidBefore: start,
            notValidAfter: start.addingTimeInterval(10 * 365 * 86_400), issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions { Critical(KeyUsage(digitalSignature: true)) }, issuerPrivateKey: .init(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return IdentityKeyRecord(
            keyID: keyID, kind: "rsa", privateKey: key.pemRepresentation, certificate: Data(serializer.serializedBytes).base64EncodedString(), createdAt: now)
    }

    private static func newKeyID() -> String {
        UUID().uuidString.lowercased()
    }

    private static func token(_ claims: IdentityClaims, keyID: String, key: P256.Signing.PrivateKey) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let header = try encoder.encode(["alg": "ES256", "kid": keyID, "typ": "JWT"]).base64URLEncoded
        let input = "\(header).\(try encoder.encode(claims).base64URLEncoded)"
        return "\(input).\(try key.signature(for: Data(input.utf8)).rawRepresentation.base64URLEncoded)"
    }

    private struct IdentityClaims: Encodable {
        var iss: String
        var sub: String
        var aud: String
        var iat: Int64
        var exp: Int64
        var environment: String
    }
}

/// `GET /.well-known/jwks.json`: the keys identity tokens are signed with.
public struct JSONWebKeySet: Codable, Sendable {
    /// One public key (RFC 7517, 7518 §6.2).
    public struct Key: Codable, Sendable {
        public var kty: String
        public var crv: String
        public var x: String
        public var y: String
        public var kid: String
        public var use: String
        public var alg: String
    }
    public var keys: [Key]
}
