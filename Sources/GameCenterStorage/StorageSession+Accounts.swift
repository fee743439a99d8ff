import SQLKit

extension StorageSession {
    /// Inserts a new player; returns false when the account name is taken in that environment.
    public func insertPlayer(_ player: PlayerRecord, aliasSkeleton: String? = nil) async throws -> Bool {
        let inserted = try await sql.raw(
            """
            INSERT INTO players (player_id, environment, account_name, password_hash, alias, alias_skeleton, underage, status,
                                 event_seq, created_at, updated_at)
            VALUES (\(bind: player.playerID), \(bind: player.environment), \(bind: player.accountName),
                    \(bind: player.passwordHash), \(bind: player.alias), \(bind: aliasSkeleton), \(bind: player.underage ? 1 : 0 as Int64),
                    \(bind: player.status), \(bind: player.eventSeq), \(bind: player.createdAt), \(bind: player.createdAt))
            ON CONFLICT DO NOTHING
            RETURNING player_id
            """
        ).first()
        return inserted != nil
    }

    /// The player with this account name in this environment.
    public func player(environment: String, accountName: String) async throws -> PlayerRecord? {
        try await sql.raw(
            """
            SELECT * FROM players WHERE environment = \(bind: environment) AND account_name = \(bind: accountName)
            """
        ).first().map(Self.player(from:))
    }

    /// The players of one environment whose account name is `name` lower-cased or whose alias is exactly `name`:
    /// at most one by account name, any number by alias (aliases need not be unique). Oldest account first. Two
    /// lookups in a `UNION`, so each side reads its own index (`environment, account_name` and `players_by_alias`):
    /// with an `OR` the planners read every player of the environment.
    public func players(environment: String, accountNameOrAlias name: String) async throws -> [PlayerRecord] {
        try await sql.raw(
            """
            SELECT * FROM players WHERE environment = \(bind: environment) AND account_name = \(bind: name.lowercased())
            UNION
            SELECT * FROM players WHERE environment = \(bind: environment) AND alias = \(bind: name)
            ORDER BY created_at, player_id
            """
        ).all().map(Self.player(from:))
    }

    /// The player with this id.
    public func player(id: String) async throws -> PlayerRecord? {
        try await sql.raw("SELECT * FROM players WHERE player_id = \(bind: id)").first().map(Self.player(from:))
    }

    /// The players with these ids (in one environment, when given), in no particular order; unknown ids are left out.
    public func players(ids: [String], environment: String?) async throws -> [PlayerRecord] {
        guard !ids.isEmpty else { return [] }
        guard let environment else {
            return try await sql.raw("SELECT * FROM players WHERE player_id IN (\(binds: ids))").all().map(Self.player(from:))
        }
        return try await sql.raw(
            """
            SELECT * FROM players WHERE environment = \(bind: environment) AND player_id IN (\(binds: ids))
            """
        ).all().map(Self.player(from:))
    }

    /// The players with these ids in one environment, each with whether it is a friend of `viewer`; one query.
    public func players(ids: [String], environment: String, asSeenBy viewer: String) async throws -> [(player: PlayerRecord, isFriend: Bool)] {
        guard !ids.isEmpty else { return [] }
        return try await sql.raw(
            """
            SELECT players.*, friendships.friend_id AS friendship FROM players
            LEFT JOIN friendships ON friendships.player_id = \(bind: viewer) AND friendships.friend_id = players.player_id
            WHERE players.environment = \(bind: environment) AND players.player_id IN (\(binds: ids))
            """
        ).all().map { row in (try Self.player(from: row), try row.optionalString("friendship") != nil) }
    }

    /// Changes alias and/or status (nil leaves a field as it is); returns the updated player.
    public func updateProfile(
        playerID: String, alias: (text: String, skeleton: String)?, status: String?, now: Int64
    ) async throws -> PlayerRecord? {
        if let alias {
            try await sql.raw(
                """
                UPDATE players SET alias = \(bind: alias.text), alias_skeleton = \(bind: alias.skeleton), updated_at = \(bind: now)
                WHERE player_id = \(bind: playerID)
                """
            ).run()
        }
        if let status {
            let stored: String? = status.isEmpty ? nil : status
            try await sql.raw("UPDATE players SET status = \(bind: stored), updated_at = \(bind: now) WHERE player_id = \(bind: playerID)").run()
        }
        return try await player(id: playerID)
    }

    /// Replaces a player's password hash, holding the player's row (``lockPlayer(id:for:)``) so that a sign-in that
    /// checked the old password either opened its session before (and is ended with the others) or sees the change;
    /// false when there is no such player.
    public func setPasswordHash(playerID: String, hash: String, now: Int64) async throws -> Bool {
        guard try await lockPlayer(id: playerID, for: .closingAccess) else { return false }
        return try await sql.raw(
            "UPDATE players SET password_hash = \(bind: hash), updated_at = \(bind: now) WHERE player_id = \(bind: playerID) RETURNING player_id"
        ).first() != nil
    }

    /// An alias of another player of `environment` whose skeleton is `skeleton` but which is not `alias` itself: the
    /// look-alike a new alias would be mistaken for. Nil when there is none.
    public func lookAlikeAlias(environment: String, skeleton: String, alias: String, otherThan playerID: String) async throws -> String? {
        try await sql.raw(
            """
            SELECT alias FROM players
            WHERE environment = \(bind: environment) AND alias_skeleton = \(bind: skeleton) AND alias <> \(bind: alias)
              AND player_id <> \(bind: playerID)
            LIMIT 1
            """
        ).first().map { try $0.decode(column: "alias", as: String.self) }
    }

    /// Up to `limit` players stored without an alias skeleton (before the migration that added them, or by a tool).
    public func playersWithoutAliasSkeleton(limit: Int) async throws -> [(playerID: String, alias: String)] {
        try await sql.raw("SELECT player_id, alias FROM players WHERE alias_skeleton IS NULL LIMIT \(bind: Int64(limit))").all().map {
            (try $0.decode(column: "player_id", as: String.self), try $0.decode(column: "alias", as: String.self))
        }
    }

    /// Stores the skeleton of a player's alias, unless the alias changed meanwhile.
    public func setAliasSkeleton(playerID: String, alias: String, skeleton: String) async throws {
        try await sql.raw(
            "UPDATE players SET alias_skeleton = \(bind: skeleton) WHERE player_id = \(bind: playerID) AND alias = \(bind: alias)"
        ).run()
    }

    /// Locks the player's row until the transaction ends, so that concurrent writers for one player (two devices
    /// reporting at once) are applied one after the other. A no-op on SQLite, whose writers are serialized anyway.
    public func lockPlayer(_ playerID: String) async throws {
        try await sql.raw("UPDATE players SET updated_at = updated_at WHERE player_id = \(bind: playerID)").run()
    }

    /// Failed sign-ins recorded for this account name.
    public func signInFailures(environment: String, accountName: String) async throws -> SignInFailures? {
        try await sql.raw(
            """
            SELECT failures, window_start, locked_until FROM sign_in_failures
            WHERE environment = \(bind: environment) AND account_name = \(bind: accountName)
            """
        ).first().map(Self.signInFailures(from:))
    }

    /// The failed sign-in state of this account name, created empty (window starting `now`) when there is none, and
    /// locked until the transaction ends: sign-ins of one account, on any node sharing the database, take turns
    /// between this read and the write that follows it (PostgreSQL: the upsert holds the row lock; SQLite
    /// serializes write transactions anyway).
    public func lockSignInFailures(environment: String, accountName: String, now: Int64) async throws -> SignInFailures {
        try await sql.raw(
            """
            INSERT INTO sign_in_failures (environment, account_name, failures, window_start, locked_until)
            VALUES (\(bind: environment), \(bind: accountName), 0, \(bind: now), 0)
            ON CONFLICT (environment, account_name) DO UPDATE SET failures = sign_in_failures.failures
            RETURNING failures, window_start, locked_until
            """
        ).first().map(Self.signInFailures(from:)) ?? SignInFailures(failures: 0, windowStart: now, lockedUntil: 0)
    }

    /// Stores the failed sign-in state for this account name.
    public func setSignInFailures(environment: String, accountName: String, _ state: SignInFailures) async throws {
        try await sql.raw(
            """
            INSERT INTO sign_in_failures (environment, account_name, failures, window_start, locked_until)
            VALUES (\(bind: environment), \(bind: accountName), \(bind: state.failures), \(bind: state.windowStart), \(bind: state.lockedUntil))
            ON CONFLICT (environment, account_name) DO UPDATE
            SET failures = excluded.failures, window_start = excluded.window_start, locked_until = excluded.locked_until
            """
        ).run()
    }

    /// Forgets the failed sign-ins of this account name (after a successful sign-in).
    public func clearSignInFailures(environment: String, accountName: String) async throws {
        try await sql.raw(
            """
            DELETE FROM sign_in_failures WHERE environment = \(bind: environment) AND account_name = \(bind: accountName)
            """
        ).run()
    }

    /// The failed sign-ins from one client address (an IPv4 address or an IPv6 /64), across accounts and
    /// environments, created empty and locked until the transaction ends as ``lockSignInFailures(environment:accountName:now:)``.
    public func lockAddressSignInFailures(address: String, now: Int64) async throws -> SignInFailures {
        try await sql.raw(
            """
            INSERT INTO sign_in_address_failures (address, failures, window_start, locked_until)
            VALUES (\(bind: address), 0, \(bind: now), 0)
            ON CONFLICT (address) DO UPDATE SET failures = sign_in_address_failures.failures
            RETURNING failures, window_start, locked_until
            """
        ).first().map(Self.signInFailures(from:)) ?? SignInFailures(failures: 0, windowStart: now, lockedUntil: 0)
    }

    /// Stores the failed sign-in state of this client address.
    public func setAddressSignInFailures(address: String, _ state: SignInFailures) async throws {
        try await sql.raw(
            """
            UPDATE sign_in_address_failures
            SET failures = \(bind: state.failures), window_start = \(bind: state.windowStart), locked_until = \(bind: state.lockedUntil)
            WHERE address = \(bind: address)
            """
        ).run()
    }

    static func signInFailures(from row: any SQLRow) throws -> SignInFailures {
        SignInFailures(failures: try row.int("failures"), windowStart: try row.int("window_start"), lockedUntil: try row.int("locked_until"))
    }

    static func player(from row: any SQLRow) throws -> PlayerRecord {
        PlayerRecord(
            playerID: try row.string("player_id"), environment: try row.string("environment"),
            accountName: try row.string("account_name"), passwordHash: try row.string("password_hash"),
            alias: try row.string("alias"), underage: try row.int("underage") != 0,
            status: try row.optionalString("status"), eventSeq: try row.int("event_seq"), createdAt: try row.int("created_at")
        )
    }
}
