import SQLKit

extension StorageSession {
    /// Stores a game's sign-in request, and forgets requests that expired before `now`.
    public func insertDeviceSignIn(_ request: DeviceSignInRecord, now: Int64) async throws {
        try await sql.raw("DELETE FROM device_sign_ins WHERE expires_at <= \(bind: now)").run()
        try await sql.raw(
            """
            INSERT INTO device_sign_ins (request_id, secret_hash, bundle_id, environment, player_id, expires_at)
            VALUES (\(bind: request.requestID), \(bind: request.secretHash), \(bind: request.bundleID), \(bind: request.environment),
                    \(bind: request.playerID), \(bind: request.expiresAt))
            """
        ).run()
    }

    /// How many sign-in requests are stored (expired ones go when the next is stored).
    public func waitingDeviceSignIns() async throws -> Int {
        try await sql.raw("SELECT COUNT(*) AS n FROM device_sign_ins").first().map { Int(try $0.int("n")) } ?? 0
    }

    /// The sign-in request with this id, confirmed or not, expired or not.
    public func deviceSignIn(requestID: String) async throws -> DeviceSignInRecord? {
        try await sql.raw(
            """
            SELECT request_id, secret_hash, bundle_id, environment, player_id, expires_at, declined_at FROM device_sign_ins
            WHERE request_id = \(bind: requestID)
            """
        ).first().map(Self.deviceSignIn(from:))
    }

    /// Confirms the request for `playerID`; false when it is gone, expired, answered already (confirmed or declined).
    public func confirmDeviceSignIn(requestID: String, playerID: String, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE device_sign_ins SET player_id = \(bind: playerID)
            WHERE request_id = \(bind: requestID) AND player_id IS NULL AND declined_at IS NULL AND expires_at > \(bind: now)
            RETURNING request_id
            """
        ).first() != nil
    }

    /// Marks the request declined ("Not now"); false when it is gone, expired, or answered already.
    public func declineDeviceSignIn(requestID: String, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE device_sign_ins SET declined_at = \(bind: now)
            WHERE request_id = \(bind: requestID) AND player_id IS NULL AND declined_at IS NULL AND expires_at > \(bind: now)
            RETURNING request_id
            """
        ).first() != nil
    }

    /// Takes a confirmed request whose secret hashes to `secretHash`: it is gone afterwards (the device signs in once).
    public func takeConfirmedDeviceSignIn(requestID: String, secretHash: String) async throws -> DeviceSignInRecord? {
        try await sql.raw(
            """
            DELETE FROM device_sign_ins
            WHERE request_id = \(bind: requestID) AND secret_hash = \(bind: secretHash) AND player_id IS NOT NULL
            RETURNING request_id, secret_hash, bundle_id, environment, player_id, expires_at, declined_at
            """
        ).first().map(Self.deviceSignIn(from:))
    }

    private static func deviceSignIn(from row: any SQLRow) throws -> DeviceSignInRecord {
        DeviceSignInRecord(
            requestID: try row.string("request_id"), secretHash: try row.string("secret_hash"), bundleID: try row.string("bundle_id"),
            environment: try row.string("environment"), playerID: try row.optionalString("player_id"), expiresAt: try row.int("expires_at"),
            declinedAt: try row.optionalInt("declined_at"))
    }
}

/// A game's sign-in through the Game Center app.
public struct DeviceSignInRecord: Sendable, Equatable {
    public var requestID: String
    /// The hash of the secret the device holds.
    public var secretHash: String
    /// The game and environment the device signs in to.
    public var bundleID: String
    public var environment: String
    /// The player who confirmed it; nil while it waits.
    public var playerID: String?
    public var expiresAt: Int64
    /// When the player answered "Not now"; nil unless they did.
    public var declinedAt: Int64?

    public init(
        requestID: String, secretHash: String, bundleID: String, environment: String, playerID: String?, expiresAt: Int64,
        declinedAt: Int64? = nil
    ) {
        self.requestID = requestID
        self.secretHash = secretHash
        self.bundleID = bundleID
        self.environment = environment
        self.playerID = playerID
        self.expiresAt = expiresAt
        self.declinedAt = declinedAt
    }
}
