import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// The challenges page: the player's challenges across games — the running ones with their standings, time left and
/// code to share, invitations to join or decline, and those ended in the last 30 days with their winners — and a form
/// to join a challenge by its code. The rules are ``ChallengeService``'s.
struct ChallengePages: Sendable {
    let challenges: ChallengeService
    let registry: GameRegistry
    let clock: ServerClock
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("challenges", on: router, .signedIn) { page in try await challengesPage(page) }
        responder.post("challenges/join", on: router, .signedIn) { page in
            try await act(page, done: "joined") { device, session in
                if let code = page.form["code"], !code.isEmpty {
                    _ = try await challenges.join(code: code, device: device, session: session)
                } else {
                    _ = try await challenges.join(page.form["challenge"] ?? "", device: device, session: session)
                }
            }
        }
        responder.post("challenges/leave", on: router, .signedIn) { page in
            try await act(page, done: "left") { device, session in
                _ = try await challenges.leave(page.form["challenge"] ?? "", device: device, session: session)
            }
        }
    }

    /// Runs `action` as a device of the challenge's game (named by the form's `code` or `challenge`).
    private func act(
        _ page: PageRequest, done: String, _ action: (DeviceIdentity, AuthenticatedSession) async throws -> Void
    ) async throws -> Response {
        let session = try page.requireSession()
        do {
            let code = page.form["code"].flatMap { $0.isEmpty ? nil : $0 }
            guard let bundleID = try await challenges.bundleID(ofChallenge: page.form["challenge"], code: code),
                let game = registry.game(bundleID: bundleID)
            else { throw APIError.challengeNotFound }
            try await action(session.device(for: game, locale: page.locale.formatting), session.session)
        } catch let error as APIError {
            return try await challengesPage(page, error: error)
        }
        return PageRequest.redirect(to: "/challenges?done=\(done)")
    }

    private func challengesPage(_ page: PageRequest, error: APIError? = nil) async throws -> Response {
        let session = try page.requireSession()
        let me = session.session.playerID
        let now = StoredTime.date(clock.nowMillis())
        let registry = self.registry
        let all = try await challenges.overview(
            playerID: me, bundleID: nil, environment: session.environment, locale: page.locale.formatting, games: { registry.game(bundleID: $0) })
        var view = ChallengesView(chrome: PageChrome("Challenges", section: .challenges, for: page), error: error?.message)
        for (game, challenge) in all {
            let item = Self.item(challenge, game: game?.name ?? "a game", me: me, now: now)
            if challenge.state == .ended {
                view.ended.append(item)
            } else if item.invited {
                view.invitations.append(item)
            } else {
                view.running.append(item)
            }
        }
        if error == nil {
            view.done =
                switch page.query("done") {
                case "joined": "You joined the challenge. Your scores in the game count from now on."
                case "left": "You left the challenge. Your scores no longer count in it."
                default: nil
                }
        }
        return renderer.render("challenges", view, status: error?.status ?? .ok)
    }

    static func item(_ challenge: ChallengeInfo, game: String, me: String, now: Date) -> ChallengesView.Challenge {
        let mine = challenge.participants.first { $0.playerID == me }
        let winners = challenge.participants.filter { challenge.winners.contains($0.playerID) }.map { $0.playerID == me ? "you" : $0.alias }
        let invitees = challenge.participants.filter { $0.status == .invited }.map { $0.playerID == me ? "you" : $0.alias }
        return ChallengesView.Challenge(
            id: challenge.challengeID, title: challenge.title, game: game, code: challenge.code,
            ends: PageDates.minute(challenge.endsAt), endsMachine: PageDates.machine(challenge.endsAt),
            left: challenge.state == .open ? PageDates.remaining(until: challenge.endsAt, from: now) : nil,
            winners: winners.isEmpty ? nil : ListFormat.and(winners), invited: mine?.status == .invited, joined: mine?.status == .joined,
            players: challenge.participants.filter { $0.status == .joined }.map { participant in
                ChallengesView.Player(
                    rank: participant.rank == 0 ? "–" : String(participant.rank), name: participant.playerID == me ? "You" : participant.alias,
                    score: participant.formattedValue ?? "no score yet",
                    attempts: participant.attemptsLeft.map { $0 == 1 ? "1 try left" : "\($0) tries left" }, isMe: participant.playerID == me)
            },
            invitees: invitees.isEmpty ? nil : ListFormat.and(invitees))
    }
}

/// The challenges page's content.
struct ChallengesView {
    /// One joined player's line of a challenge's standings.
    struct Player {
        let rank: String
        let name: String
        let score: String
        let attempts: String?
        let isMe: Bool
    }

    /// One challenge.
    struct Challenge {
        let id: String
        let title: String
        let game: String
        let code: String
        let ends: String, endsMachine: String
        /// Time left in words, while it runs.
        let left: String?
        /// Who won, in words, once ended.
        let winners: String?
        let invited: Bool
        let joined: Bool
        let players: [Player]
        /// The invited who have not joined, in words (nil when none).
        let invitees: String?
    }

    let chrome: PageChrome
    var running: [Challenge] = []
    var invitations: [Challenge] = []
    var ended: [Challenge] = []
    let error: String?
    var done: String?

    init(chrome: PageChrome, error: String?) {
        self.chrome = chrome
        self.error = error
    }
}
