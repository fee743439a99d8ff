import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// The turns page: the player's turn-based matches across games — those waiting for their turn first (whose turn,
/// since when, time left), invitations to accept or decline, the matches waiting for others, and the finished ones
/// with every participant's outcome. The rules are ``TurnBasedService``'s.
struct TurnPages: Sendable {
    let turns: TurnBasedService
    let registry: GameRegistry
    let clock: ServerClock
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("turns", on: router, .signedIn) { page in try await turnsPage(page) }
        responder.post("turns/accept", on: router, .signedIn) { page in try await answer(page, accept: true) }
        responder.post("turns/decline", on: router, .signedIn) { page in try await answer(page, accept: false) }
        responder.post("turns/quit", on: router, .signedIn) { page in
            let session = try page.requireSession()
            do {
                try await turns.requestQuit(id: page.form["match"] ?? "", playerID: session.session.playerID)
            } catch let error as APIError {
                return try await turnsPage(page, error: error)
            }
            return PageRequest.redirect(to: "/turns?done=quit")
        }
    }

    private func answer(_ page: PageRequest, accept: Bool) async throws -> Response {
        let session = try page.requireSession()
        do {
            try await turns.answerInvitation(id: page.form["match"] ?? "", playerID: session.session.playerID, accept: accept)
        } catch let error as APIError {
            return try await turnsPage(page, error: error)
        }
        return PageRequest.redirect(to: "/turns?done=\(accept ? "accepted" : "declined")")
    }

    private func turnsPage(_ page: PageRequest, error: APIError? = nil) async throws -> Response {
        let session = try page.requireSession()
        let me = session.session.playerID
        let now = StoredTime.date(clock.nowMillis())
        let (matches, aliases) = try await turns.overview(playerID: me)
        var view = TurnsView(chrome: PageChrome("Turns", section: .turns, for: page), error: error?.message, done: nil)
        for overview in matches {
            let state = overview.state
            let item = Self.item(state, me: me, aliases: aliases, now: now, game: registry.game(bundleID: state.bundleID)?.name ?? state.bundleID)
            let mySeat = state.seatIndex(of: me).map { state.seats[$0] }
            if state.status == .ended {
                view.finished.append(item)
            } else if mySeat?.status == .invited {
                view.invitations.append(item)
            } else if let current = state.current, state.seats[current].playerID == me {
                view.yourTurn.append(item)
            } else {
                view.theirTurn.append(item)
            }
        }
        if error == nil {
            view.done =
                switch page.query("done") {
                case "accepted": "Invitation accepted. The match is in your list; play your turns from the game."
                case "declined": "Invitation declined. Your seat goes back to auto-match."
                case "quit": "Your game was asked to leave the match: it quits, with the result it chooses, when it next runs."
                default: nil
                }
        }
        return renderer.render("turns", view, status: error?.status ?? .ok)
    }

    static func item(_ state: TurnMatchState, me: String, aliases: [String: String], now: Date, game: String) -> TurnsView.Match {
        let name = { (seat: TurnMatchState.Seat) -> String in
            guard let player = seat.playerID else { return "an open seat" }
            return player == me ? "you" : aliases[player] ?? "a player"
        }
        let lastChange = state.seats.compactMap(\.lastTurnAt).max() ?? state.createdAt
        let since = StoredTime.date(lastChange)
        let deadline = state.turnDeadline.map(StoredTime.date)
        let inviter = state.seats.first.map(name) ?? "a player"
        let others = state.seats.filter { $0.playerID != me }.map(name)
        let results = state.seats.filter { $0.playerID != nil }.map { "\(name($0)) \(Self.outcome($0.outcome))" }
        return TurnsView.Match(
            id: state.matchID, gameName: game, players: ListFormat.and(others + ["you"]),
            results: state.status == .ended ? ListFormat.and(results) : nil,
            whoseTurn: state.current.map { current in
                switch state.seats[current].playerID {
                case nil: "waiting for a player to join"
                case me: "your turn"
                default: "\(name(state.seats[current]))'s turn"
                }
            },
            inviter: inviter, note: state.message, since: PageDates.minute(since), sinceMachine: PageDates.machine(since),
            timeLeft: deadline.map { PageDates.remaining(until: $0, from: now) })
    }

    /// An outcome as a verb phrase ("won", "came second").
    static func outcome(_ raw: Int) -> String {
        switch raw {
        case 0: "has no result"
        case 1: "quit"
        case 2: "won"
        case 3: "lost"
        case 4: "tied"
        case 5: "ran out of time"
        case 6: "came first"
        case 7: "came second"
        case 8: "came third"
        case 9: "came fourth"
        default: "scored \(raw & 0xFFFF)"
        }
    }
}

/// The turns page's content.
struct TurnsView {
    /// One match.
    struct Match {
        /// The match id (the answer forms' field).
        let id: String
        let gameName: String
        /// The other players and "you", in running text.
        let players: String
        /// Every participant's outcome, once the match ended.
        let results: String?
        /// Whose turn it is, in words (nil once ended).
        let whoseTurn: String?
        /// Who started the match (the one who invited).
        let inviter: String
        /// The last turn's message. (Not `message`: see ``FriendsPage``'s note on names shared with enclosing objects.)
        let note: String?
        /// When the match last changed, and how long the current turn has left.
        let since: String, sinceMachine: String
        let timeLeft: String?
    }

    let chrome: PageChrome
    var yourTurn: [Match] = []
    var invitations: [Match] = []
    var theirTurn: [Match] = []
    var finished: [Match] = []
    let error: String?
    var done: String?

    init(chrome: PageChrome, error: String?, done: String?) {
        self.chrome = chrome
        self.error = error
        self.done = done
    }
}
