import Foundation

/// `POST /v1/accounts`: create an account and sign in.
public struct SignUpRequest: Codable, Sendable {
    public var account: String
    public var password: String
    public var alias: String
    public var underage: Bool?

    public init(account: String, password: String, alias: String, underage: Bool = false) {
        self.account = account
        self.password = password
        self.alias = alias
        self.underage = underage
    }
}

/// `POST /v1/sessions`: sign in to an existing account.
public struct SignInRequest: Codable, Sendable {
    public var account: String
    public var password: String

    public init(account: String, password: String) {
        self.account = account
        self.password = password
    }
}

/// `POST /v1/sessions/for-game`: a session for the device's game from a live session of another game of the same
/// player and environment on the same device (the seed's one player per device, for every game).
public struct GameSessionRequest: Codable, Sendable {
    /// The bearer token of the other game's session.
    public var token: String

    /// A request made with the other game's token.
    public init(token: String) {
        self.token = token
    }
}

/// The answer to sign-up and sign-in: a bearer token and the signed-in player.
public struct SessionResponse: Codable, Sendable {
    /// The bearer token; shown once, stored only hashed on the server.
    public var token: String
    /// Identifies the session (for listing and revoking), never usable as a credential.
    public var sessionID: String
    public var expiresAt: Date
    public var player: LocalPlayerProfile
    /// The player's newest realtime event sequence number at sign-in: the device's starting cursor.
    public var eventCursor: Int64

    public init(token: String, sessionID: String, expiresAt: Date, player: LocalPlayerProfile, eventCursor: Int64) {
        self.token = token
        self.sessionID = sessionID
        self.expiresAt = expiresAt
        self.player = player
        self.eventCursor = eventCursor
    }
}

/// What the signed-in player knows about themself.
public struct LocalPlayerProfile: Codable, Sendable, Equatable {
    public var playerID: String
    public var alias: String
    public var underage: Bool
    public var status: String?

    public init(playerID: String, alias: String, underage: Bool, status: String?) {
        self.playerID = playerID
        self.alias = alias
        self.underage = underage
        self.status = status
    }
}

/// `PATCH /v1/me`: change the alias and/or status message; absent fields stay as they are.
public struct UpdateProfileRequest: Codable, Sendable {
    public var alias: String?
    public var status: String?

    public init(alias: String? = nil, status: String? = nil) {
        self.alias = alias
        self.status = status
    }
}

/// `POST /v1/me/password`: the player replaces their password; every other session of theirs ends.
public struct ChangePasswordRequest: Codable, Sendable {
    /// The password now, typed again.
    public var currentPassword: String
    /// The password from now on.
    public var newPassword: String

    public init(currentPassword: String, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }
}

/// One of the player's sessions, as listed by `GET /v1/sessions`.
public struct SessionInfo: Codable, Sendable, Equatable {
    public var sessionID: String
    public var bundleID: String
    public var createdAt: Date
    public var expiresAt: Date
    /// True for the session that made the request.
    public var current: Bool

    public init(sessionID: String, bundleID: String, createdAt: Date, expiresAt: Date, current: Bool) {
        self.sessionID = sessionID
        self.bundleID = bundleID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.current = current
    }
}

/// `GET /v1/sessions`.
public struct SessionList: Codable, Sendable {
    public var sessions: [SessionInfo]

    public init(sessions: [SessionInfo]) {
        self.sessions = sessions
    }
}

/// `POST /v1/device-sign-ins`: a game signs its player in through the Game Center app. The player opens `path` on the
/// server in a browser, signs in there (or is already) and confirms; meanwhile the device asks
/// `POST /v1/device-sign-ins/{requestID}/session` with the `secret` until it gets the session (`202` while it waits),
/// within ``Limits/deviceSignInLifetimeSeconds``.
public struct DeviceSignIn: Codable, Sendable, Equatable {
    /// Names the request (in the page's path; not a secret).
    public var requestID: String
    /// Known to this device only: taking the session needs it.
    public var secret: String
    /// The page to open on the server, e.g. `/device-sign-in/dsi_…`.
    public var path: String
    /// When the request ends, confirmed or not.
    public var expiresAt: Date

    public init(requestID: String, secret: String, path: String, expiresAt: Date) {
        self.requestID = requestID
        self.secret = secret
        self.path = path
        self.expiresAt = expiresAt
    }
}

/// The body of `POST /v1/device-sign-ins/{requestID}/session`.
public struct DeviceSignInClaim: Codable, Sendable, Equatable {
    /// The ``DeviceSignIn/secret`` the request was started with.
    public var secret: String

    public init(secret: String) {
        self.secret = secret
    }
}
