import GameCenterProtocol

/// A signed-in page session: whose, in which environment, and the token its forms carry.
struct PageSession: Sendable {
    /// The session as the account rules know it (the same record an API session has).
    let session: AuthenticatedSession
    /// The environment the player signed in to; pages show only its players and games' data.
    let environment: GameCenterProtocol.Environment
    /// The CSRF token of this session's forms (``CSRFToken/forSession(token:sessionID:)``).
    let csrfToken: String

    /// The web app as a device, for the account rules.
    var device: DeviceIdentity { WebAppClient.device(environment: environment) }

    /// The player's view of `game`, texts and numbers in `locale`, for the game's services.
    func device(for game: Game, locale: String) -> DeviceIdentity {
        DeviceIdentity(game: game, environment: environment, locale: locale)
    }
}
