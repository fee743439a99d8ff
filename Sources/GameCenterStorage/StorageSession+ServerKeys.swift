import SQLKit

/// A studio's game-server key as stored: its public key only (the private key never reaches the server after it was
/// made and handed out).
public struct ServerKeyRecord: Sendable, Equatable {
    public var keyID: String
    /// The `iss` its tokens must carry (App Store Connect's issuer id); kept when the key is rotated.
    public var issuerID: String
    public var bundleID: String
    public var environment: String
    /// Permission names, in a stable order.
    public var permissions: [String]
    /// What the studio called it.
    public var name: String
    /// The P-256 public key, PEM.
    public var publicKey: String
    public var createdAt: Int64
    /// When a rotated key stops working; nil while it has not been rotated.
    public var expiresAt: Int64?
    public var revokedAt: Int64?
    /// The key that replaced it when it was rotated.
    public var replacedBy: String?

    public init(
        keyID: String, issuerID: String, bundleID: String, environment: String, permissions: [String], name: String, publicKey: String,
        createdAt: Int64, expiresAt: Int64? = nil, revokedAt: Int64? = nil, replacedBy: String? = nil
    ) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.environment = environment
        self.permissions = permissions
        self.name = name
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.replacedBy = replacedBy
    }
}

/// The stored answer to a server write made under an `Idempotency-Key`.
public struct IdempotentAnswer: Sendable, Equatable {
    /// SHA-256 of the request it answered (method, path and body), hex.
    public var requestHash: String
    public var status: Int
    public var body: String

    public init(requestHash: String, status: Int, body: String) {
        self.requestHash = requestHash
        self.status = status
        self.body = body
    }
}

extension StorageSession {
    /// Stores a new key.
    public func insertServerKey(_ key: ServerKeyRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO server_keys (key_id, issuer_id, bundle_id, environment, permissions, name, public_key, created_at, expires_at, revoked_at,
                replaced_by)
            VALUES (\(bind: key.keyID), \(bind: key.issuerID), \(bind: key.bundleID), \(bind: key.environment),
                \(bind: key.permissions.joined(separator: " ")), \(bind: key.name), \(bind: key.publicKey), \(bind: key.createdAt),
                \(bind: key.expiresAt), \(bind: key.revokedAt), \(bind: key.replacedBy))
            """
        ).run()
    }

    /// The key with this id, revoked and expired ones included; nil when there is none.
    public func serverKey(id: String) async throws -> ServerKeyRecord? {
        try await sql.raw("SELECT \(unsafeRaw: Self.serverKeyColumns) FROM server_keys WHERE key_id = \(bind: id)").first().map(Self.serverKeyRecord)
    }

    /// Every key, or a game's keys, oldest first.
    public func serverKeys(bundleID: String?) async throws -> [ServerKeyRecord] {
        if let bundleID {
            return try await sql.raw(
                "SELECT \(unsafeRaw: Self.serverKeyColumns) FROM server_keys WHERE bundle_id = \(bind: bundleID) ORDER BY created_at, key_id"
            ).all().map(Self.serverKeyRecord)
        }
        return try await sql.raw("SELECT \(unsafeRaw: Self.serverKeyColumns) FROM server_keys ORDER BY created_at, key_id").all().map(
            Self.serverKeyRecord)
    }

    /// Marks a rotated key: it works until `expiresAt` (never later than an earlier expiry) and names its successor.
    public func retireServerKey(id: String, expiresAt: Int64, replacedBy: String) async throws {
        try await sql.raw(
            """
            UPDATE server_keys SET expires_at = CASE WHEN expires_at IS NULL OR expires_at > \(bind: expiresAt) THEN \(bind: expiresAt)
                ELSE expires_at END, replaced_by = \(bind: replacedBy)
            WHERE key_id = \(bind: id)
            """
        ).run()
    }

    /// Revokes a key from `now` (a key revoked before keeps its first revocation time).
    public func revokeServerKey(id: String, now: Int64) async throws {
        try await sql.raw("UPDATE server_keys SET revoked_at = \(bind: now) WHERE key_id = \(bind: id) AND revoked_at IS NULL").run()
    }

    /// The answer stored for an idempotency key in a game and environment, if any.
    public func idempotentAnswer(bundleID: String, environment: String, key: String) async throws -> IdempotentAnswer? {
        try await sql.raw(
            """
            SELECT request_hash, status, body FROM server_idempotency
            WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND idempotency_key = \(bind: key)
            """
        ).first().map { row in
            IdempotentAnswer(requestHash: try row.string("request_hash"), status: Int(try row.int("status")), body: try row.string("body"))
        }
    }

    /// Keeps an answer under its idempotency key; when two requests raced, the first stored answer stays.
    public func keepIdempotentAnswer(_ answer: IdempotentAnswer, bundleID: String, environment: String, key: String, now: Int64) async throws {
        try await sql.raw(
            """
            INSERT INTO server_idempotency (bundle_id, environment, idempotency_key, request_hash, status, body, created_at)
            VALUES (\(bind: bundleID), \(bind: environment), \(bind: key), \(bind: answer.requestHash), \(bind: Int64(answer.status)),
                \(bind: answer.body), \(bind: now))
            ON CONFLICT DO NOTHING
            """
        ).run()
    }

    /// Forgets the answers kept since before `time`; returns how many.
    @discardableResult
    public func forgetIdempotentAnswers(before time: Int64) async throws -> Int {
        try await sql.raw("DELETE FROM server_idempotency WHERE created_at < \(bind: time) RETURNING created_at").all().count
    }

    private static let serverKeyColumns =
        "key_id, issuer_id, bundle_id, environment, permissions, name, public_key, created_at, expires_at, revoked_at, replaced_by"

    private static func serverKeyRecord(_ row: any SQLRow) throws -> ServerKeyRecord {
        ServerKeyRecord(
            keyID: try row.string("key_id"), issuerID: try row.string("issuer_id"), bundleID: try row.string("bundle_id"),
            environment: try row.string("environment"), permissions: try row.string("permissions").split(separator: " ").map(String.init),
            name: try row.string("name"), publicKey: try row.string("public_key"), createdAt: try row.int("created_at"),
            expiresAt: try row.optionalInt("expires_at"), revokedAt: try row.optionalInt("revoked_at"), replacedBy: try row.optionalString("replaced_by"))
    }
}

/// A key the server signs players' identity with, as stored.
public struct IdentityKeyRecord: Sendable, Equatable {
    public var keyID: String
    /// `rsa` or `es256`.
    public var kind: String
    /// PEM.
    public var privateKey: String
    /// The `rsa` key's X.509 certificate, DER as base64.
    public var certificate: String?
    public var createdAt: Int64

    public init(keyID: String, kind: String, privateKey: String, certificate: String?, createdAt: Int64) {
        self.keyID = keyID
        self.kind = kind
        self.privateKey = privateKey
        self.certificate = certificate
        self.createdAt = createdAt
    }
}

extension StorageSession {
    /// Every identity key, oldest first.
    public func identityKeys() async throws -> [IdentityKeyRecord] {
        try await sql.raw("SELECT key_id, kind, private_key, certificate, created_at FROM identity_keys ORDER BY created_at, key_id").all().map { row in
            IdentityKeyRecord(
                keyID: try row.string("key_id"), kind: try row.string("kind"), privateKey: try row.string("private_key"),
                certificate: try row.optionalString("certificate"), createdAt: try row.int("created_at"))
        }
    }

    /// Stores a new identity key.
    public func insertIdentityKey(_ key: IdentityKeyRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO identity_keys (key_id, kind, private_key, certificate, created_at)
            VALUES (\(bind: key.keyID), \(bind: key.kind), \(bind: key.privateKey), \(bind: key.certificate), \(bind: key.createdAt))
            """
        ).run()
    }
}
