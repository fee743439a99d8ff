import GameCenterProtocol

/// The web app as a client of the account rules: its page sessions are stored like a device's sessions (so
/// revoking and "sign out everywhere" cover both), under a bundle id no manifest can take — manifests' bundle ids
/// are reverse-DNS names, which have no colon.
enum WebAppClient {
    /// The bundle id of page sessions; a player's list of sessions shows it for the web app's.
    static let bundleID = "web:gamecenter"

    /// The web app in the shape of a game, for the account rules that take a device.
    static let game = Game(
        bundleID: bundleID, name: "Game Center on the web", clientKey: nil, defaultLocale: "en",
        leaderboards: [], aggregates: [], achievements: [], manifestPath: ""
    )

    /// The identity of the web app signing players in to `environment`.
    static func device(environment: GameCenterProtocol.Environment) -> DeviceIdentity {
        DeviceIdentity(game: game, environment: environment, locale: "en")
    }
}

extension DeviceIdentity {
    /// Whether this is the web app rather than a game (its sessions record no game as played).
    var isWebApp: Bool { game.bundleID == WebAppClient.bundleID }
}
