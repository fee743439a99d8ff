import Hummingbird

/// Admin HTTP for a player's data rights (behind ``AdminMiddleware``): download everything stored about a player, and
/// delete their account for good.
struct PlayerDataAdminRoutes {
    let deletion: AccountDeletionService
    let archive: PlayerArchive

    func add(to group: RouterGroup<AppRequestContext>) {
        group.get("players/{playerID}/archive") { _, context -> Response in
            try await archive.response(playerID: context.parameters.requirePlayerID())
        }
        group.delete("players/{playerID}") { _, context -> Response in
            try await deletion.delete(playerID: context.parameters.requirePlayerID(), actor: AuditLog.admin)
            return Response(status: .noContent)
        }
    }
}
