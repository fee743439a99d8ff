import Foundation
import GameCenterStorage

/// The studio console's users and their sign-ins: apart from players' accounts, with the same password hashing
/// (``Credentials``) and the same sign-in throttle (``SignInThrottle``, its account names counted under `console`).
/// Used by `gamecenter console …` and by the console's pages.
public struct ConsoleUsers: Sendable {
    /// How long a console sign-in lasts.
    static let sessionLifetimeMillis: Int64 = 12 * 3600 * 1000
    /// The throttle's namespace for console account names (players' are their environment's).
    static let throttleNamespace = "console"

    let database: Database
    let credentials: Credentials
    let throttle: SignInThrottle
    let clock: ServerClock

    init(database: Database, policy: AccountPolicy, clock: ServerClock) {
        self.database = database
        self.credentials = Credentials(bcryptCost: policy.bcryptCost)
        self.throttle = SignInThrottle(policy: policy)
        self.clock = clock
    }

    /// The users of `database`, for `gamecenter console` (the server's account rules and clock).
    public init(database: Database) {
        self.init(database: database, policy: AccountPolicy(), clock: ServerClock(isAdjustable: false))
    }

    /// A console user as `gamecenter console list-users` and the users page show it.
    public struct User: Sendable, Equatable {
        /// The sign-in name.
        public let name: String
        /// What the user may do.
        public let role: ConsoleRole
        /// When the user was added.
        public let createdAt: Date
    }

    /// Adds a user; `actor` is who asked (`cli` for `gamecenter console add-user`, else `console:NAME`), for the
    /// audit log. Throws `console.invalid_user` for a name or password breaking its rule and `console.user_exists`
    /// for a name in use.
    public func add(name: String, role: ConsoleRole, password: String, actor: String) async throws {
        try Self.checkName(name)
        guard (10...128).contains(password.count) else {
            throw APIError.consoleInvalidUser("a console password has 10 to 128 characters; this one has \(password.count)")
        }
        let now = clock.nowMillis()
        let record = ConsoleUserRecord(name: name, role: role.rawValue, passwordHash: try await credentials.hashPassword(password), createdAt: now)
        let entry = AuditLog.entry(bundleID: "", actor: actor, action: "console.user_added", subject: name, detail: ["role": role.rawValue], now: now)
        try await database.write { storage in
            guard try await storage.insertConsoleUser(record) else { throw APIError.consoleUserExists(name) }
            try await storage.appendAudit(entry)
        }
    }

    /// The users not removed, by name.
    public func list() async throws -> [User] {
        try await database.read { try await $0.consoleUsers() }.map {
            User(name: $0.name, role: ConsoleRole(rawValue: $0.role) ?? .readOnly, createdAt: StoredTime.date($0.createdAt))
        }
    }

    /// Removes a user and ends their console sessions at once; `actor` as for ``add(name:role:password:actor:)``.
    public func remove(name: String, actor: String) async throws {
        let now = clock.nowMillis()
        let entry = AuditLog.entry(bundleID: "", actor: actor, action: "console.user_removed", subject: name, detail: [:], now: now)
        try await database.write { storage in
            guard try await storage.disableConsoleUser(name: name, now: now) else { throw APIError.consoleUserUnknown(name) }
            try await storage.appendAudit(entry)
        }
    }

    /// Signs a user in: every attempt counts against the name and the client `address` before the password is
    /// checked, as players' sign-ins do; a success takes its count back. Answers the bearer token for the cookie.
    func signIn(name: String, password: String, from address: ClientAddress?) async throws -> (token: String, session: ConsoleSession) {
        guard name.count <= 64, password.count <= 1024 else { throw APIError.invalidCredentials }
        let now = clock.nowMillis()
        let throttle = self.throttle
        let namespace = Self.throttleNamespace
        let (user, lock) = try await database.write { storage in
            let lock = try await throttle.countAttempt(namespace: namespace, account: name, address: address, now: now, in: storage)
            return (try await storage.consoleUser(name: name), lock)
        }
        let active = user.flatMap { $0.disabledAt == nil ? $0 : nil }
        let valid = try await credentials.verifyPassword(password, hash: active?.passwordHash ?? credentials.decoyHash)
        guard let active, valid, let role = ConsoleRole(rawValue: active.role) else { throw APIError.invalidCredentials }
        let token = Credentials.newToken()
        let record = ConsoleSessionRecord(
            sessionID: Credentials.newID(prefix: "cs_"), tokenHash: Credentials.tokenHash(token), userName: active.name, createdAt: now,
            expiresAt: now + Self.sessionLifetimeMillis)
        let entry = AuditLog.entry(
            bundleID: "", actor: "console:\(active.name)", action: "console.signed_in", subject: active.name,
            detail: address.map { ["address": $0.key] } ?? [:], now: now)
        try await database.write { storage in
            try await throttle.succeeded(namespace: namespace, account: name, address: address, lock: lock, now: now, in: storage)
            try await storage.insertConsoleSession(record)
            try await storage.appendAudit(entry)
        }
        return (token, ConsoleSession(record, role: role, token: token))
    }

    /// The live session a console cookie's token belongs to; nil when it is unknown, ended, expired, or its user was
    /// removed.
    func session(token: String) async throws -> ConsoleSession? {
        guard token.count <= 200 else { return nil }
        guard let (session, user) = try await database.read({ try await $0.consoleSession(tokenHash: Credentials.tokenHash(token)) }),
            session.revokedAt == nil, session.expiresAt > clock.nowMillis(), user.disabledAt == nil, let role = ConsoleRole(rawValue: user.role)
        else { return nil }
        return ConsoleSession(session, role: role, token: token)
    }

    /// Ends a console session (sign-out).
    func signOut(_ session: ConsoleSession) async throws {
        let now = clock.nowMillis()
        _ = try await database.write { try await $0.revokeConsoleSession(sessionID: session.sessionID, now: now) }
    }

    /// Throws `console.invalid_user` unless `name` is 1 to 64 letters, digits, `.`, `_` or `-`.
    static func checkName(_ name: String) throws {
        guard (1...64).contains(name.count), name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-_".contains($0)) }) else {
            throw APIError.consoleInvalidUser("a console user's name is 1 to 64 letters, digits, '.', '_' or '-'")
        }
    }
}

/// A signed-in console browser: whose, with what role, and the token its forms carry.
struct ConsoleSession: Sendable {
    let sessionID: String
    /// The user's name (the audit log's actor is `console:NAME`).
    let userName: String
    let role: ConsoleRole
    /// The CSRF token of this session's forms (``CSRFToken/forSession(token:sessionID:)``).
    let csrfToken: String

    init(_ record: ConsoleSessionRecord, role: ConsoleRole, token: String) {
        self.sessionID = record.sessionID
        self.userName = record.userName
        self.role = role
        self.csrfToken = CSRFToken.forSession(token: token, sessionID: record.sessionID)
    }

    /// The audit log's name for this user.
    var actor: String { "console:\(userName)" }
}

extension APIError {
    /// The console user's role may not take `action`.
    static func consoleRoleRequired(_ action: ConsoleAction, has role: ConsoleRole) -> APIError {
        APIError(
            .consoleRoleRequired,
            "to \(action.rawValue) you need the role \(action.role.rawValue) or higher; you are signed in as \(role.rawValue). Ask an owner of the console")
    }

    /// A console user's name, role or password broke its rule.
    static func consoleInvalidUser(_ rule: String) -> APIError {
        APIError(.consoleInvalidUser, rule)
    }

    /// The name is in use by another console user.
    static func consoleUserExists(_ name: String) -> APIError {
        APIError(.consoleUserExists, "a console user named '\(name.prefix(64))' exists already; choose another name or remove that user first")
    }

    /// No console user has the name.
    static func consoleUserUnknown(_ name: String) -> APIError {
        APIError(.consoleUserUnknown, "no console user is named '\(name.prefix(64))'")
    }
}
