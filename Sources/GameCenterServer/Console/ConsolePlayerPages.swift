import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// The console's players: search by account name, alias or player id; a player's page with everything stored about
/// them; and the support and developer actions on them. Each action is a service's (``AccountService``,
/// ``ModerationService``, ``PlayerBans``, ``LeaderboardService``, ``AchievementService``, ``ArchiveDownload``,
/// ``AccountDeletionService``) and is written to the audit log with the console user as its actor.
struct ConsolePlayerPages: Sendable {
    /// Players a search lists at most.
    static let searchLimit = 50
    /// Matches, invitations and turn-based matches a player's page lists at most.
    static let listLimit = 20

    let database: Database
    let registry: GameRegistry
    let accounts: AccountService
    let moderation: ModerationService
    let bans: PlayerBans
    let leaderboards: LeaderboardService
    let achievements: AchievementService
    let archives: ArchiveDownload
    let deletion: AccountDeletionService
    let audit: AuditLog
    let clock: ServerClock
    let responder: ConsoleResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        router.get("console") { _, _ in PageRequest.redirect(to: "/console/players") }
        responder.get("console/players", on: router) { page in try await search(page) }
        responder.get("console/players/{playerID}", on: router) { page in try await playerPage(page, newPassword: nil, sessionsEnded: 0) }
        responder.post("console/players/{playerID}/sessions/end", on: router, .endSessions) { page in
            let (player, session) = try await target(page)
            let ended = try await accounts.endSessions(playerID: player.playerID, reason: "ended by the studio")
            try await audit.record(
                bundleID: "", actor: session.actor, action: "player.sessions_ended", subject: player.playerID, detail: ["sessions": "\(ended)"])
            return done(player, "Ended \(ended) session(s).")
        }
        for hidden in [true, false] {
            responder.post(hidden ? "console/players/{playerID}/hide" : "console/players/{playerID}/show", on: router, .hide) { page in
                let (player, session) = try await target(page)
                let game = try game(page)
                let state = try await moderation.setHidden(hidden, playerID: player.playerID, game: game, actor: session.actor)
                let word = hidden ? "hidden from" : "shown again on"
                return done(player, state.changed ? "The player is \(word) \(game.name)'s boards." : "Nothing changed: the player was \(word) them already.")
            }
        }
        responder.post("console/players/{playerID}/ban", on: router, .ban) { page in
            let (player, session) = try await target(page)
            let reason = page.field("reason")
            guard !reason.isEmpty else { throw APIError.invalidPageParameter("reason", allowed: "the reason for the ban (the audit log keeps it)") }
            let (changed, ended) = try await bans.ban(playerID: player.playerID, reason: reason, actor: session.actor)
            return done(player, changed ? "The player is banned; \(ended) session(s) ended." : "The player was banned already.")
        }
        responder.post("console/players/{playerID}/unban", on: router, .ban) { page in
            let (player, session) = try await target(page)
            let changed = try await bans.unban(playerID: player.playerID, actor: session.actor)
            return done(player, changed ? "The ban is lifted: the player may sign in again." : "The player was not banned.")
        }
        responder.post("console/players/{playerID}/password", on: router, .resetPassword) { page in
            let (player, session) = try await target(page)
            let (password, ended) = try await accounts.resetPassword(playerID: player.playerID)
            try await audit.record(
                bundleID: "", actor: session.actor, action: "player.password_reset", subject: player.playerID, detail: ["sessions": "\(ended)"])
            return try await playerPage(page, newPassword: password, sessionsEnded: ended)
        }
        responder.post("console/players/{playerID}/scores/erase", on: router, .eraseScores) { page in
            let (player, session) = try await target(page)
            let game = try game(page)
            let removed = try await leaderboards.removeScores(game: game, playerID: player.playerID)
            try await audit.record(
                bundleID: game.bundleID, actor: session.actor, action: "scores.erased", subject: player.playerID, detail: ["reports": "\(removed)"])
            return done(player, "Erased \(removed) score report(s) in \(game.name).")
        }
        responder.post("console/players/{playerID}/data", on: router, .downloadData) { page in
            let (player, session) = try await target(page)
            try await audit.record(bundleID: "", actor: session.actor, action: "player.data_downloaded", subject: player.playerID)
            return try await archives.response(playerID: player.playerID)
        }
        responder.post("console/players/{playerID}/delete", on: router, .deleteAccount) { page in
            let (player, session) = try await target(page)
            guard page.field("confirm") == player.accountName else {
                throw APIError.invalidPageParameter("confirm", allowed: "the player's account name, typed to confirm the deletion")
            }
            try await deletion.delete(playerID: player.playerID, actor: session.actor)
            return PageRequest.redirect(
                to: "/console/players?done=" + PageLinks.segment("Deleted the account of \(player.alias): only its tombstone is left."))
        }
        responder.post("console/players/{playerID}/achievements/reset", on: router, .resetAchievements) { page in
            let (player, session) = try await target(page)
            let game = try game(page)
            let reset = try await achievements.reset(game: game, playerID: player.playerID)
            try await audit.record(
                bundleID: game.bundleID, actor: session.actor, action: "achievements.reset", subject: player.playerID,
                detail: ["achievements": "\(reset)"])
            return done(player, "Reset \(reset) achievement(s) in \(game.name).")
        }
    }

    private func search(_ page: ConsoleRequest) async throws -> Response {
        let text = page.query("q")?.trimmingCharacters(in: .whitespaces) ?? ""
        guard text.count <= 200 else { throw APIError.invalidPageParameter("q", allowed: "at most 200 characters") }
        let found = text.isEmpty ? [] : try await database.read { try await $0.searchPlayers(text, limit: Self.searchLimit) }
        let content = SearchPage(
            chrome: ConsoleChrome("Players", section: .players, for: page), done: page.query("done").map { String($0.prefix(300)) }, query: text,
            searched: !text.isEmpty,
            players: found.map {
                SearchPage.Row(
                    link: Self.link($0.playerID), alias: $0.alias, account: $0.accountName, id: $0.playerID, environment: $0.environment,
                    created: PageDates.day(StoredTime.date($0.createdAt)))
            }, limit: Self.searchLimit)
        return renderer.render("console-players", content)
    }

    /// `newPassword`: the password just given (shown once, with the sessions that ended).
    private func playerPage(_ page: ConsoleRequest, newPassword: String?, sessionsEnded: Int) async throws -> Response {
        let playerID = try page.context.parameters.requirePlayerID()
        let now = clock.nowMillis()
        let games = registry.all
        let stored = try await database.read { storage -> StoredPlayer? in
            guard let player = try await storage.player(id: playerID) else { return nil }
            let friends = try await storage.players(ids: try await storage.friendIDs(of: playerID), environment: nil)
            var scores: [BoardScore] = []
            var progress: [(String, [AchievementProgressRecord])] = []
            for game in games {
                scores += try await storage.boardScores(playerID: playerID, bundleID: game.bundleID)
                progress.append((game.bundleID, try await storage.achievementProgress(bundleID: game.bundleID, playerID: playerID)))
            }
            return StoredPlayer(
                player: player, ban: try await storage.playerBan(playerID: playerID), sessions: try await storage.activeSessions(playerID: playerID, now: now),
                played: try await storage.playedGames(playerID: playerID), friends: friends, scores: scores, achievements: progress,
                hiddenIn: try await storage.hiddenPlayers().filter { $0.value.contains(playerID) }.map(\.key),
                matches: try await storage.playerMatches(playerID: playerID, limit: Self.listLimit),
                invitations: try await storage.playerInvitations(playerID: playerID, limit: Self.listLimit),
                saves: try await storage.savedGameVersions(playerID: playerID, environment: player.environment),
                turns: try await storage.turnMatches(playerID: playerID, limit: Self.listLimit))
        }
        guard let stored else { throw APIError.unknownPlayers([String(playerID.prefix(100))]) }
        var content = PlayerPage(stored, games: games, page: page, registry: registry)
        content.newPassword = newPassword.map { PlayerPage.NewPassword(password: $0, sessionsEnded: sessionsEnded) }
        return renderer.render("console-player", content, status: newPassword == nil ? .ok : .created)
    }

    /// The player a form acts on, and who acts.
    private func target(_ page: ConsoleRequest) async throws -> (PlayerRecord, ConsoleSession) {
        let session = try page.requireSession()
        let playerID = try page.context.parameters.requirePlayerID()
        guard let player = try await database.read({ try await $0.player(id: playerID) }) else {
            throw APIError.unknownPlayers([String(playerID.prefix(100))])
        }
        return (player, session)
    }

    /// The game a form names in its `game` field.
    private func game(_ page: ConsoleRequest) throws -> Game {
        let bundleID = page.field("game")
        guard let game = registry.game(bundleID: bundleID) else { throw APIError.unknownGame(bundleID) }
        return game
    }

    /// Back to the player's page, saying what was done.
    private func done(_ player: PlayerRecord, _ message: String) -> Response {
        PageRequest.redirect(to: Self.link(player.playerID) + "?done=" + PageLinks.segment(message))
    }

    /// The address of a player's page.
    static func link(_ playerID: String) -> String {
        "/console/players/" + PageLinks.segment(playerID)
    }
}

/// Everything stored about one player, read in one transaction.
private struct StoredPlayer: Sendable {
    let player: PlayerRecord
    let ban: PlayerBanRecord?
    let sessions: [SessionRecord]
    let played: [(bundleID: String, lastPlayedAt: Int64)]
    let friends: [PlayerRecord]
    let scores: [BoardScore]
    let achievements: [(String, [AchievementProgressRecord])]
    let hiddenIn: [String]
    let matches: [PlayerMatchRecord]
    let invitations: [PlayerInvitationRecord]
    let saves: [SavedGameVersionRecord]
    let turns: [TurnMatchRecord]
}

/// The search page's content.
struct SearchPage {
    /// One player found.
    struct Row {
        let link: String, alias: String, account: String, id: String, environment: String, created: String
    }

    let chrome: ConsoleChrome
    /// What the last action did (after deleting an account).
    let done: String?
    let query: String
    /// Whether a search was made (to say when it found nobody).
    let searched: Bool
    let players: [Row]
    /// The most players listed.
    let limit: Int
}

/// A player's page's content.
struct PlayerPage {
    /// A labelled line of text.
    struct Line {
        let title: String, detail: String
    }

    /// One game's part of the page: scores per board, achievements, and the per-game actions.
    struct GameSection {
        /// A board the player has scores on.
        struct Board {
            let category: String, environment: String, reports: Int, best: Int64, latest: String
        }

        let bundleID: String, name: String
        let hidden: Bool
        let boards: [Board]
        let achievements: [Line]
        let completed: Int, total: Int
    }

    let chrome: ConsoleChrome
    let done: String?
    let playerID: String, alias: String, account: String, environment: String, created: String
    /// The status message, when the player set one.
    let status: String?
    let underage: Bool
    let banned: Line?
    let sessions: [Line], played: [Line], friends: [Line], matches: [Line], invitations: [Line], saves: [Line], turns: [Line]
    let games: [GameSection]
    /// What the signed-in user may do here.
    let mayEndSessions: Bool, mayHide: Bool, mayBan: Bool, mayGivePassword: Bool, mayErase: Bool, mayReset: Bool, mayDownload: Bool,
        mayDelete: Bool
    /// A password just given to the player: shown once.
    struct NewPassword {
        let password: String
        let sessionsEnded: Int
    }
    var newPassword: NewPassword?
    /// The form addresses.
    let base: String

    fileprivate init(_ stored: StoredPlayer, games: [Game], page: ConsoleRequest, registry: GameRegistry) {
        let player = stored.player
        func name(_ bundleID: String) -> String { registry.game(bundleID: bundleID)?.name ?? bundleID }
        func minute(_ millis: Int64) -> String { PageDates.minute(StoredTime.date(millis)) }
        chrome = ConsoleChrome(player.alias, section: .players, for: page)
        done = page.query("done").map { String($0.prefix(300)) }
        playerID = player.playerID
        alias = player.alias
        account = player.accountName
        environment = player.environment
        created = minute(player.createdAt)
        status = player.status.flatMap { $0.isEmpty ? nil : $0 }
        underage = player.underage
        banned = stored.ban.map { Line(title: "Banned \(minute($0.bannedAt)) by \($0.bannedBy)", detail: $0.reason) }
        sessions = stored.sessions.map {
            Line(
                title: $0.bundleID == WebAppClient.bundleID ? "Game Center web app" : name($0.bundleID),
                detail: "\($0.environment) · signed in \(minute($0.createdAt)) · expires \(minute($0.expiresAt)) · \($0.sessionID)")
        }
        played = stored.played.map { Line(title: name($0.bundleID), detail: "last played \(minute($0.lastPlayedAt))") }
        friends = stored.friends.map { Line(title: $0.alias, detail: $0.playerID) }
        matches = stored.matches.map {
            Line(
                title: "\(name($0.bundleID)) · \($0.state)",
                detail: "\($0.matchID) · joined \(minute($0.joinedAt))\($0.leftAt.map { " · left \(minute($0))" } ?? "")")
        }
        invitations = stored.invitations.map {
            Line(
                title: "\(name($0.bundleID)) · \($0.state)",
                detail: ($0.inviter == player.playerID ? "sent to \($0.invitee)" : "from \($0.inviter)") + " · \(minute($0.createdAt))")
        }
        saves = stored.saves.map {
            Line(title: "\(name($0.bundleID)) · \($0.name)", detail: "\($0.size) bytes from \($0.deviceName) · \(minute($0.createdAt))")
        }
        turns = stored.turns.map { Line(title: "\(name($0.bundleID)) · \($0.seats) seats", detail: "\($0.matchID) · started \(minute($0.createdAt))") }
        let hiddenIn = Set(stored.hiddenIn)
        let progress = Dictionary(stored.achievements) { a, _ in a }
        self.games = games.map { game in
            let orders = Dictionary(game.leaderboards.map { ($0.category, $0.order) }) { a, _ in a }
            let boards = Dictionary(grouping: stored.scores.filter { $0.bundleID == game.bundleID }) { "\($0.environment)\n\($0.record.category)" }
                .values.compactMap { reports -> GameSection.Board? in
                    guard let first = reports.first, let last = reports.last else { return nil }
                    let values = reports.map(\.record.value)
                    let best = orders[first.record.category] == .ascending ? values.min()! : values.max()!
                    return GameSection.Board(
                        category: first.record.category, environment: first.environment, reports: reports.count, best: best,
                        latest: "\(last.record.value) · \(minute(last.record.earnedAt))")
                }
                .sorted { ($0.environment, $0.category) < ($1.environment, $1.category) }
            let records = progress[game.bundleID] ?? []
            let achievements = records.map { record in
                let title = game.achievements.first { $0.identifier == record.identifier }.map {
                    Localization.text($0.title, locale: "en", fallback: game.defaultLocale)
                }
                return Line(
                    title: title ?? record.identifier,
                    detail: record.completedAt.map { "completed \(minute($0))" } ?? "\(Int(record.percent)) %")
            }
            return GameSection(
                bundleID: game.bundleID, name: game.name, hidden: hiddenIn.contains(game.bundleID), boards: boards, achievements: achievements,
                completed: records.filter { $0.completedAt != nil }.count, total: game.achievements.count)
        }
        mayEndSessions = page.may(.endSessions)
        mayHide = page.may(.hide)
        mayBan = page.may(.ban)
        mayGivePassword = page.may(.resetPassword)
        mayErase = page.may(.eraseScores)
        mayReset = page.may(.resetAchievements)
        mayDownload = page.may(.downloadData)
        mayDelete = page.may(.deleteAccount)
        base = ConsolePlayerPages.link(player.playerID)
    }
}
