import Hummingbird

/// Hiding players and reading the audit log: for the admin key (`/admin/v1/games/{bundleID}/…`) and for server keys
/// with the `moderation` permission (`/server/v1/…`, the key's game).
struct ModerationRoutes {
    let moderation: ModerationService
    let audit: AuditLog
    let registry: GameRegistry

    func addAdmin(to group: RouterGroup<AppRequestContext>) {
        group.put("games/{bundleID}/players/{playerID}/hidden") { _, context -> HiddenPlayerState in
            try await moderation.setHidden(true, playerID: context.parameters.requirePlayerID(), game: game(context), actor: AuditLog.admin)
        }
        group.delete("games/{bundleID}/players/{playerID}/hidden") { _, context -> HiddenPlayerState in
            try await moderation.setHidden(false, playerID: context.parameters.requirePlayerID(), game: game(context), actor: AuditLog.admin)
        }
        group.get("games/{bundleID}/audit-log") { request, context -> AuditLogPage in
            let (before, limit) = try Self.page(request)
            return try await audit.entries(bundleID: game(context).bundleID, before: before, limit: limit)
        }
    }

    func addServer(to group: RouterGroup<AppRequestContext>) {
        group.put("players/{playerID}/hidden") { _, context -> HiddenPlayerState in
            let caller = try context.requireServerCaller()
            try caller.require(.moderation)
            return try await moderation.setHidden(true, playerID: context.parameters.requirePlayerID(), game: caller.game, actor: caller.keyID)
        }
        group.delete("players/{playerID}/hidden") { _, context -> HiddenPlayerState in
            let caller = try context.requireServerCaller()
            try caller.require(.moderation)
            return try await moderation.setHidden(false, playerID: context.parameters.requirePlayerID(), game: caller.game, actor: caller.keyID)
        }
        group.get("audit-log") { request, context -> AuditLogPage in
            let caller = try context.requireServerCaller()
            try caller.require(.moderation)
            let (before, limit) = try Self.page(request)
            return try await audit.entries(bundleID: caller.game.bundleID, before: before, limit: limit)
        }
    }

    private func game(_ context: AppRequestContext) throws -> Game {
        let bundleID = try context.parameters.require("bundleID")
        guard let game = registry.game(bundleID: bundleID) else { throw APIError.unknownGame(bundleID) }
        return game
    }

    private static func page(_ request: Request) throws -> (before: Int64?, limit: Int) {
        let query = request.uri.queryParameters
        let before = try query["before"].map { text -> Int64 in
            guard let value = Int64(text) else { throw APIError.invalidParameter("before is an entry id (a whole number)") }
            return value
        }
        let limit = try query["limit"].map { text -> Int in
            guard let value = Int(text) else { throw APIError.invalidParameter("limit is a whole number from 1 to 1000") }
            return value
        }
        return (before, limit ?? 100)
    }
}

extension HiddenPlayerState: ResponseEncodable {}
extension AuditLogPage: ResponseEncodable {}
