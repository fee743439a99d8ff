import Crypto
import Foundation
import GameCenterProtocol
import GameCenterStorage
import Synchronization

/// The caller of a game-server route: a studio's server, as its key's token proved.
struct ServerCaller: Sendable {
    let keyID: String
    let game: Game
    let environment: Environment
    let permissions: Set<ServerKeyPermission>

    /// Refuses the request unless the key holds `permission`.
    func require(_ permission: ServerKeyPermission) throws(APIError) {
        guard permissions.contains(permission) else {
            throw APIError.keyForbidden(
                "it needs the permission '\(permission.rawValue)'; key \(keyID) holds \(permissions.sorted().map(\.rawValue).joined(separator: ", "))")
        }
    }
}

/// Server keys: made, listed, rotated and revoked by the admin routes, and the check of every game-server request's
/// token against them.
///
/// Every node reads keys from storage and remembers each for a second, so a revocation (or a rotated key's end)
/// takes effect on every node within a second of it being stored (or of its time).
final class ServerKeyService: Sendable {
    let database: Database
    let registry: GameRegistry
    let clock: ServerClock
    /// Keys (and ids that name no key) as read from storage, with the monotonic time they were read.
    private let remembered = Mutex<[String: (key: UsableKey?, readAt: ContinuousClock.Instant)]>([:])

    /// How long a key read from storage is trusted.
    static let rememberFor: Duration = .seconds(1)
    /// At most this many key ids are remembered (ids a caller made up included).
    static let maximumRemembered = 10_000
    /// A rotated key keeps working this long by default.
    static let defaultGraceSeconds: Int64 = 24 * 3600

    /// A stored key with its parsed public key.
    private struct UsableKey: Sendable {
        let record: ServerKeyRecord
        let publicKey: P256.Signing.PublicKey
    }

    init(database: Database, registry: GameRegistry, clock: ServerClock) {
        self.database = database
        self.registry = registry
        self.clock = clock
    }

    // MARK: Admin

    /// Makes a key pair, stores its public half and answers both halves (the private one only now).
    func create(_ request: ServerKeyCreateRequest) async throws -> CreatedServerKey {
        guard registry.game(bundleID: request.bundleID) != nil else { throw APIError.unknownGame(request.bundleID) }
        guard !request.permissions.isEmpty else {
            throw APIError.invalidParameter(
                "permissions names at least one of: \(ServerKeyPermission.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let name = request.name ?? "server key"
        guard (1...100).contains(name.count), !name.contains(where: \.isNewline) else {
            throw APIError.invalidParameter("name is 1 to 100 characters on one line")
        }
        return try await make(
            issuerID: UUID().uuidString.lowercased(), bundleID: request.bundleID, environment: request.environment,
            permissions: Array(Set(request.permissions)).sorted(), name: name)
    }

    /// A game's keys (every key when `bundleID` is nil), oldest first.
    func list(bundleID: String?) async throws -> ServerKeyList {
        let records = try await database.read { try await $0.serverKeys(bundleID: bundleID) }
        let now = clock.nowMillis()
        return ServerKeyList(keys: records.map { Self.info($0, now: now) })
    }

    /// Makes a new key with the old one's game, environment, permissions, name and issuer; the old one keeps working
    /// for `graceSeconds` (both at once: a fleet of servers can switch without downtime), then stops.
    func rotate(keyID: String, graceSeconds: Int64?) async throws -> CreatedServerKey {
        let grace = graceSeconds ?? Self.defaultGraceSeconds
        guard (0...30 * 86_400).contains(grace) else { throw APIError.invalidParameter("graceSeconds is 0 to 2592000 (30 days); got \(grace)") }
        guard let old = try await database.read({ try await $0.serverKey(id: keyID) }) else { throw APIError.keyUnknown(keyID) }
        let now = clock.nowMillis()
        guard Self.isActive(old, now: now) else { throw APIError.invalidParameter("key \(keyID) is revoked or expired; create a new key instead") }
        let created = try await make(
            issuerID: old.issuerID, bundleID: old.bundleID, environment: GameCenterProtocol.Environment(rawValue: old.environment) ?? .sandbox,
            permissions: old.permissions.compactMap(ServerKeyPermission.init(rawValue:)), name: old.name)
        try await database.write { try await $0.retireServerKey(id: keyID, expiresAt: now + grace * 1000, replacedBy: created.key.keyID) }
        forget(keyID)
        return created
    }

    /// Revokes a key at once (on every node within a second).
    func revoke(keyID: String) async throws -> ServerKeyInfo {
        let now = clock.nowMillis()
        let record = try await database.write { storage -> ServerKeyRecord? in
            try await storage.revokeServerKey(id: keyID, now: now)
            return try await storage.serverKey(id: keyID)
        }
        guard let record else { throw APIError.keyUnknown(keyID) }
        forget(keyID)
        return Self.info(record, now: now)
    }

    // MARK: Requests

    /// The caller a request's `Authorization` header proves, or the error that says why it does not.
    func authenticate(authorization: String?, method: String, path: String) async throws -> ServerCaller {
        guard let authorization, authorization.hasPrefix("Bearer ") else { throw APIError.keyRequired }
        let token = try ServerToken(parsing: authorization.dropFirst("Bearer ".count))
        // A token's times are the caller's real clock's; a key's state is dated on the server's clock (which a test
        // server may move forward).
        try token.check(at: Int64(Date().timeIntervalSince1970), method: method, path: path)
        let nowMillis = clock.nowMillis()
        guard let key = try await usableKey(token.keyID) else { throw APIError.keyInvalid("no server key has the id (kid) '\(token.keyID.prefix(40))'") }
        guard token.issuerID == key.record.issuerID else { throw APIError.keyInvalid("the issuer (iss) is not key \(token.keyID)'s") }
        guard token.isSigned(by: key.publicKey) else { throw APIError.keyInvalid("the signature is not key \(token.keyID)'s") }
        if let revokedAt = key.record.revokedAt, revokedAt <= nowMillis { throw APIError.keyInvalid("key \(token.keyID) was revoked") }
        if let expiresAt = key.record.expiresAt, expiresAt <= nowMillis {
            throw APIError.keyInvalid("key \(token.keyID) was rotated and its grace ended; sign with \(key.record.replacedBy ?? "its successor")")
        }
        guard let game = registry.game(bundleID: key.record.bundleID), let environment = GameCenterProtocol.Environment(rawValue: key.record.environment) else {
            throw APIError.keyInvalid("key \(token.keyID)'s game \(key.record.bundleID) is not served here any more")
        }
        return ServerCaller(
            keyID: key.record.keyID, game: game, environment: environment,
            permissions: Set(key.record.permissions.compactMap(ServerKeyPermission.init(rawValue:))))
    }

    private func usableKey(_ keyID: String) async throws -> UsableKey? {
        let now = ContinuousClock.now
        if let entry = remembered.withLock({ $0[keyID] }), now - entry.readAt < Self.rememberFor { return entry.key }
        let record = try await database.read { try await $0.serverKey(id: keyID) }
        let key = record.flatMap { record in (try? P256.Signing.PublicKey(pemRepresentation: record.publicKey)).map { UsableKey(record: record, publicKey: $0) }
        }
        remembered.withLock { entries in
            if entries.count >= Self.maximumRemembered {
                entries = entries.filter { now - $0.value.readAt < Self.rememberFor }
                if entries.count >= Self.maximumRemembered { entries.removeAll() }
            }
            entries[keyID] = (key, now)
        }
        return key
    }

    private func forget(_ keyID: String) {
        _ = remembered.withLock { $0.removeValue(forKey: keyID) }
    }

    private func make(issuerID: String, bundleID: String, environment: GameCenterProtocol.Environment, permissions: [ServerKeyPermission], name: String)
        async throws -> CreatedServerKey
    {
        let privateKey = P256.Signing.PrivateKey()
        let record = ServerKeyRecord(
            keyID: Self.newKeyID(), issuerID: issuerID, bundleID: bundleID, environment: environment.rawValue,
            permissions: permissions.map(\.rawValue), name: name, publicKey: privateKey.publicKey.pemRepresentation, createdAt: clock.nowMillis())
        try await database.write { try await $0.insertServerKey(record) }
        return CreatedServerKey(key: Self.info(record, now: record.createdAt), privateKey: privateKey.pemRepresentation)
    }

    /// Ten characters from A–Z and 0–9, as App Store Connect's key ids.
    private static func newKeyID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<10).map { _ in alphabet.randomElement(using: &generator)! })
    }

    private static func isActive(_ record: ServerKeyRecord, now: Int64) -> Bool {
        record.revokedAt == nil && (record.expiresAt.map { $0 > now } ?? true)
    }

    private static func info(_ record: ServerKeyRecord, now: Int64) -> ServerKeyInfo {
        ServerKeyInfo(
            keyID: record.keyID, issuerID: record.issuerID, bundleID: record.bundleID,
            environment: GameCenterProtocol.Environment(rawValue: record.environment) ?? .sandbox,
            permissions: record.permissions.compactMap(ServerKeyPermission.init(rawValue:)), name: record.name,
            createdAt: StoredTime.date(record.createdAt), expiresAt: record.expiresAt.map(StoredTime.date), revokedAt: record.revokedAt.map(StoredTime.date),
            replacedBy: record.replacedBy, isActive: isActive(record, now: now))
    }
}

extension APIError {
    /// No key has this id.
    static func keyUnknown(_ keyID: String) -> APIError {
        APIError(.keyUnknown, "no server key has the id '\(keyID.prefix(40))'")
    }
}
