import Foundation
import GameCenterProtocol

/// What a server key may do. A key holds one or more; each game-server route needs one.
public enum ServerKeyPermission: String, Codable, Sendable, CaseIterable, Comparable {
    /// Report scores for any player of the key's game (the leaderboard-entry submissions), on every board whatever its
    /// write policy.
    case scoresWrite = "scores:write"
    /// Report achievement progress for any player (the player-achievement submissions).
    case achievementsWrite = "achievements:write"
    /// Act in turn-based matches on players' behalf.
    case turnsWrite = "turns:write"
    /// Read players' saved games.
    case savesRead = "saves:read"
    /// Read players, their scores, ranks and achievements.
    case playersRead = "players:read"
    /// Hide players from boards and review quarantined scores.
    case moderation
    /// Everything the admin routes allow for the key's game.
    case admin

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// `POST /admin/v1/keys`: a new key for a game.
public struct ServerKeyCreateRequest: Codable, Sendable {
    /// The game the key acts for.
    public var bundleID: String
    /// `sandbox` or `live`.
    public var environment: Environment
    /// At least one permission.
    public var permissions: [ServerKeyPermission]
    /// What the studio calls it (1 to 100 characters); "server key" when left out.
    public var name: String?

    /// A request for a key.
    public init(bundleID: String, environment: GameCenterProtocol.Environment, permissions: [ServerKeyPermission], name: String? = nil) {
        self.bundleID = bundleID
        self.environment = environment
        self.permissions = permissions
        self.name = name
    }
}

/// `POST /admin/v1/keys/{keyID}/rotate`: how long the old key keeps working beside the new one.
public struct ServerKeyRotateRequest: Codable, Sendable {
    /// 0 (the old key stops at once) to 30 days; 24 hours when left out.
    public var graceSeconds: Int64?

    /// A rotation with this grace.
    public init(graceSeconds: Int64? = nil) {
        self.graceSeconds = graceSeconds
    }
}

/// A server key as the admin routes show it (never its private key).
public struct ServerKeyInfo: Codable, Sendable, Equatable {
    /// The `kid` its tokens carry.
    public var keyID: String
    /// The `iss` its tokens carry.
    public var issuerID: String
    public var bundleID: String
    public var environment: Environment
    public var permissions: [ServerKeyPermission]
    public var name: String
    public var createdAt: Date
    /// When a rotated key stops working.
    public var expiresAt: Date?
    public var revokedAt: Date?
    /// The key that replaced it.
    public var replacedBy: String?
    /// Whether a token it signs is taken now.
    public var isActive: Bool

    /// A key's public description.
    public init(
        keyID: String, issuerID: String, bundleID: String, environment: GameCenterProtocol.Environment, permissions: [ServerKeyPermission], name: String,
        createdAt: Date, expiresAt: Date?, revokedAt: Date?, replacedBy: String?, isActive: Bool
    ) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.environment = environment
        self.permissions = permissions
        self.name = name
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.replacedBy = replacedBy
        self.isActive = isActive
    }
}

/// A new key with its private key, shown this once: the server keeps only the public key.
public struct CreatedServerKey: Codable, Sendable {
    public var key: ServerKeyInfo
    /// The P-256 private key as a PKCS #8 PEM (the format of App Store Connect's `.p8` files).
    public var privateKey: String

    /// A new key and its private key.
    public init(key: ServerKeyInfo, privateKey: String) {
        self.key = key
        self.privateKey = privateKey
    }
}

/// `GET /admin/v1/keys`: keys, oldest first.
public struct ServerKeyList: Codable, Sendable {
    public var keys: [ServerKeyInfo]

    /// A list of keys.
    public init(keys: [ServerKeyInfo]) {
        self.keys = keys
    }
}
