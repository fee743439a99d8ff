import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// The party page: a player types a party code a friend shared (or opens the link an activity's `partyURL` gives) and
/// joins the party from the browser; their game, running on their device, hears `wantsToPlay` and starts the
/// activity. When games share a code, the page asks which one. The rules are ``ActivityService``'s.
struct PartyPages: Sendable {
    let activities: ActivityService
    let registry: GameRegistry
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("party", on: router, .signedIn) { page in
            do {
                return try await partyPage(page, code: page.query("code"))
            } catch let error as APIError {
                return try await partyPage(page, code: nil, error: error)
            }
        }
        responder.post("party/join", on: router, .signedIn) { page in
            let session = try page.requireSession()
            let code = page.form["code"] ?? ""
            do {
                let found = try await activities.parties(code: code, environment: session.environment)
                let chosen = page.form["game"].flatMap { game in found.first { $0.party.bundleID == game } }
                guard let summary = chosen ?? (found.count == 1 ? found[0] : nil) else {
                    guard !found.isEmpty else { throw APIError.partyNotFound }
                    return try await partyPage(page, code: code)
                }
                guard let game = registry.game(bundleID: summary.party.bundleID) else { throw APIError.partyNotFound }
                _ = try await activities.joinFromApp(summary.party, playerID: session.session.playerID, game: game)
                return PageRequest.redirect(to: "/party?done=\(summary.party.bundleID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
            } catch let error as APIError {
                return try await partyPage(page, code: code, error: error)
            }
        }
    }

    /// The form, and the parties with `code` when one was given (to choose one when several games have it).
    private func partyPage(_ page: PageRequest, code: String?, error: APIError? = nil) async throws -> Response {
        let session = try page.requireSession()
        var view = PartyView(chrome: PartyView.chrome(for: page), code: code ?? "", error: error?.message)
        if let code, !code.isEmpty, error == nil {
            view.parties = try await activities.parties(code: code, environment: session.environment).map { summary in
                let game = registry.game(bundleID: summary.party.bundleID)
                let title = game.flatMap { game in
                    game.activities.first { $0.identifier == summary.party.definition }.map {
                        Localization.text($0.title, locale: page.locale.formatting, fallback: game.defaultLocale)
                    }
                }
                return PartyView.Party(
                    game: game?.name ?? summary.party.bundleID, bundleID: summary.party.bundleID, activity: title ?? summary.party.definition,
                    host: summary.hostAlias, players: summary.players == 1 ? "1 player" : "\(summary.players) players")
            }
            view.hasParties = !view.parties.isEmpty
            if view.parties.isEmpty { view.error = APIError.partyNotFound.message }
        }
        if error == nil, let done = page.query("done"), let game = registry.game(bundleID: done) {
            view.done = "You joined the party. Open \(game.name) on your device: it starts the activity with your party."
        }
        return renderer.render("party", view, status: error?.status ?? (view.error == nil ? .ok : .notFound))
    }
}

/// The party page's content.
struct PartyView {
    /// A live party with the code typed.
    struct Party {
        let game: String
        let bundleID: String
        let activity: String
        let host: String
        let players: String
    }

    let chrome: PageChrome
    var code: String
    var error: String?
    var done: String?
    var parties: [Party] = []
    /// Whether `parties` lists any (the renderer reads stored properties only).
    var hasParties = false

    static func chrome(for page: PageRequest) -> PageChrome { PageChrome("Join a party", section: .invitations, for: page) }
}
