import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// A game's "play with friends" page: the player ticks friends (by alias) and the choice is kept for the game, whose
/// invitation handler gets their player ids when it next starts on the player's device, to invite them (the seed's
/// `playersToInvite`). The rules are ``MatchmakingService``'s.
struct PlayWithFriendsPages: Sendable {
    let registry: GameRegistry
    let matchmaking: MatchmakingService
    let friends: FriendService
    let players: PlayerService
    let clock: ServerClock
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("games/{bundleID}/play", on: router, .signedIn) { page in try await playPage(page) }
        responder.post("games/{bundleID}/play", on: router, .signedIn) { page in
            let session = try page.requireSession()
            let game = try game(page)
            do {
                let chosen = page.form.values("friend")
                guard !chosen.isEmpty else { throw APIError.noFriendChosen }
                do {
                    try await matchmaking.playWithFriends(
                        chosen, game: game, environment: session.environment, playerID: session.session.playerID,
                        turnBased: page.form["kind"] == "turnBased")
                } catch let error as APIError {
                    throw Self.told(error)
                }
            } catch let error as APIError {
                return try await playPage(page, error: error)
            }
            return PageRequest.redirect(to: PageLinks.game(game.bundleID, "play", [("done", "chosen")]))
        }
    }

    /// The matchmaking error `error` told without the player ids the JSON API names.
    private static func told(_ error: APIError) -> APIError {
        switch error.code {
        case .matchmakingNotFriends: .playOnlyWithFriends
        case .playerUnknown: .noSuchFriendToPlayWith
        default: error
        }
    }

    private func game(_ page: PageRequest) throws -> Game {
        let bundleID = try page.context.parameters.require("bundleID")
        guard let game = registry.game(bundleID: bundleID) else { throw APIError.gameUnrecognized(bundleID) }
        return game
    }

    private func playPage(_ page: PageRequest, error: APIError? = nil) async throws -> Response {
        let session = try page.requireSession()
        let game = try game(page)
        let ids = try await friends.friends(of: session.session)
        let profiles = try await players.loadEveryPlayer(ids, caller: session.session, device: session.device)
            .sorted { $0.alias.localizedCaseInsensitiveCompare($1.alias) == .orderedAscending }
        let waiting = try await matchmaking.waitingPlayWithFriends(playerID: session.session.playerID, game: game)
        let aliases = Dictionary(profiles.map { ($0.playerID, $0.alias) }) { first, _ in first }
        // After a refused form the boxes stay as ticked; otherwise they show the choice that waits, if any.
        let ticked = Set(error == nil ? waiting?.friends ?? [] : page.form.values("friend"))
        let now = StoredTime.date(clock.nowMillis())
        let content = PlayWithFriendsView(
            chrome: PageChrome("\(game.name): play with friends", for: page), gameName: game.name,
            friends: profiles.enumerated().map { index, profile in
                .init(id: profile.playerID, alias: profile.alias, field: "friend-\(index)", ticked: ticked.contains(profile.playerID))
            },
            hasFriends: !profiles.isEmpty,
            waitingAliases: waiting.flatMap { choice in
                let names = choice.friends.compactMap { aliases[$0] }
                return names.isEmpty ? nil : ListFormat.and(names)
            },
            waitingUntil: waiting.map { PageDates.minute(StoredTime.date($0.expiresAt)) },
            waitingUntilMachine: waiting.map { PageDates.machine(StoredTime.date($0.expiresAt)) },
            waitingFor: waiting.map { PageDates.remaining(until: StoredTime.date($0.expiresAt), from: now) },
            formAction: PageLinks.game(game.bundleID, "play"),
            leaderboardsLink: PageLinks.game(game.bundleID, "leaderboards"),
            achievementsLink: PageLinks.game(game.bundleID, "achievements"),
            error: error?.message, done: error == nil && page.query("done") == "chosen")
        return renderer.render("play", content, status: error?.status ?? .ok)
    }
}

/// The play-with-friends page's content.
struct PlayWithFriendsView {
    /// A friend to tick.
    struct Friend {
        /// The player id (the checkbox's value; never shown).
        let id: String
        let alias: String
        /// The checkbox's element id.
        let field: String
        let ticked: Bool
    }

    let chrome: PageChrome
    let gameName: String
    let friends: [Friend]
    let hasFriends: Bool
    /// The friends of the choice that waits for the game, in words, and until when it waits.
    let waitingAliases: String?, waitingUntil: String?, waitingUntilMachine: String?, waitingFor: String?
    let formAction: String, leaderboardsLink: String, achievementsLink: String
    let error: String?
    /// The form was just sent.
    let done: Bool
}
