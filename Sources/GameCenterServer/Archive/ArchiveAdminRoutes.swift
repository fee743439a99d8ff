import Hummingbird

/// Admin HTTP for archives and a player's data rights (behind ``AdminMiddleware``): download the whole server's, a
/// game's or a player's archive, and delete a player's account for good.
struct ArchiveAdminRoutes {
    let deletion: AccountDeletionService
    let archives: ArchiveDownload
    let registry: GameRegistry

    func add(to group: RouterGroup<AppRequestContext>) {
        group.get("archive") { _, _ -> Response in
            try await archives.response(scope: .server, name: "game-center-server")
        }
        group.get("games/{bundleID}/archive") { _, context -> Response in
            let bundleID = try context.parameters.require("bundleID")
            guard registry.game(bundleID: bundleID) != nil else { throw APIError.unknownGame(bundleID) }
            return try await archives.response(scope: .game(bundleID: bundleID), name: bundleID)
        }
        group.get("players/{playerID}/archive") { _, context -> Response in
            try await archives.response(playerID: context.parameters.requirePlayerID())
        }
        group.delete("players/{playerID}") { _, context -> Response in
            try await deletion.delete(playerID: context.parameters.requirePlayerID(), actor: AuditLog.admin)
            return Response(status: .noContent)
        }
    }
}
