import Foundation
import GameCenterProtocol
import Hummingbird

/// A game's achievements page: image (once completed), points, progress, completion date and rarity (the share of
/// the game's players who completed it); hidden achievements stay hidden until the player reports progress on
/// them, as the seed says. A friend's completions can be shown side by side. The rules are
/// ``AchievementService``'s.
struct AchievementPages: Sendable {
    let registry: GameRegistry
    let achievements: AchievementService
    let friends: FriendService
    let players: PlayerService
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("games/{bundleID}/achievements", on: router, .signedIn) { page in try await achievementsPage(page) }
        responder.get("games/{bundleID}/achievements/{identifier}/image", on: router, .signedIn) { page in
            let session = try page.requireSession()
            let game = try game(page)
            let identifier = try page.context.parameters.require("identifier")
            let png = try await achievements.image(
                identifier: identifier, device: session.device(for: game, locale: game.defaultLocale),
                session: session.session)
            return Response(
                status: .ok, headers: [.contentType: "image/png", .cacheControl: "private, max-age=300"],
                body: .init(byteBuffer: ByteBuffer(bytes: png)))
        }
    }

    private func game(_ page: PageRequest) throws -> Game {
        let bundleID = try page.context.parameters.require("bundleID")
        guard let game = registry.game(bundleID: bundleID) else { throw APIError.gameUnrecognized(bundleID) }
        return game
    }

    private func achievementsPage(_ page: PageRequest) async throws -> Response {
        let session = try page.requireSession()
        let game = try game(page)
        let device = session.device(for: game, locale: page.locale.texts(of: game))
        let descriptions = try await achievements.descriptions(device: device, session: session.session)
        let mine = try await achievements.progress(device: device, playerID: session.session.playerID)
        let progress = Dictionary(mine.achievements.map { ($0.identifier, $0) }) { a, _ in a }
        let rarity = try await achievements.rarity(device: device)

        let friendIDs = try await friends.friends(of: session.session)
        let friendProfiles = try await players.loadEveryPlayer(friendIDs, caller: session.session, device: session.device)
            .sorted { $0.alias.localizedCaseInsensitiveCompare($1.alias) == .orderedAscending }
        let compared = page.query("compare").flatMap { id in id.isEmpty ? nil : id }
        var friendCompleted: [String: Date]?
        var friendAlias: String?
        var friendPoints: Int?
        if let compared {
            guard let friend = friendProfiles.first(where: { $0.playerID == compared }) else { throw APIError.notYourFriend }
            let list = try await achievements.friendAchievements(of: compared, device: device, session: session.session)
            friendCompleted = Dictionary(list.achievements.compactMap { a in a.completedAt.map { (a.identifier, $0) } }) { a, _ in a }
            friendAlias = friend.alias
            friendPoints = list.points
        }
        let rows = descriptions.map { description -> AchievementsView.Row in
            let record = progress[description.identifier]
            let completed = record?.completedAt
            let friendStatus = friendCompleted.map { completions in
                completions[description.identifier].map { AchievementsView.Status("completed", on: $0) } ?? AchievementsView.Status("not completed")
            }
            guard !(description.isHidden && description.title.isEmpty) else {
                return .init(
                    hidden: true, title: "Hidden achievement", description: "Keep playing to reveal it.", points: nil,
                    percent: 0, percentText: "", completed: nil, image: nil, rarity: nil, myStatus: .init("not revealed"),
                    friendStatus: friendStatus)
            }
            let percent = record?.percentComplete ?? 0
            let percentText =
                percent.formatted(.number.precision(.fractionLength(0...1)).locale(Locale(identifier: page.locale.formatting)))
                + "\u{A0}%"
            return .init(
                hidden: false, title: description.title,
                description: completed != nil ? description.achievedDescription : description.unachievedDescription,
                points: description.maximumPoints, percent: Int(percent.rounded(.down)),
                percentText: percentText,
                completed: completed.map(PageDates.day),
                image: completed != nil && description.hasImage
                    ? PageLinks.game(game.bundleID, "achievements/\(PageLinks.segment(description.identifier))/image") : nil,
                rarity: rarity?[description.identifier].map { share in
                    (share * 100).formatted(.number.precision(.fractionLength(0...1)).locale(Locale(identifier: page.locale.formatting)))
                        + "\u{A0}% of players"
                },
                myStatus: completed.map { AchievementsView.Status("completed", on: $0) } ?? AchievementsView.Status("\(percentText) done"),
                friendStatus: friendStatus)
        }
        let content = AchievementsView(
            chrome: PageChrome("\(game.name): achievements", for: page), bundleID: game.bundleID, gameName: game.name,
            points: mine.points, maximumPoints: game.achievements.reduce(0) { $0 + $1.points },
            rows: rows, friends: friendProfiles.map { .init(id: $0.playerID, alias: $0.alias, selected: $0.playerID == compared) },
            comparing: compared != nil, friendAlias: friendAlias, friendPoints: friendPoints,
            leaderboardsLink: PageLinks.game(game.bundleID, "leaderboards"), playLink: PageLinks.game(game.bundleID, "play"),
            formAction: PageLinks.game(game.bundleID, "achievements"))
        return renderer.render("achievements", content)
    }
}

/// The achievements page's content.
struct AchievementsView {
    /// One achievement as the player may see it.
    struct Row {
        /// Not yet revealed: no title, points or image.
        let hidden: Bool
        let title: String, description: String
        let points: Int?
        /// Progress, 0…100 (whole percent for the bar) and as text.
        let percent: Int, percentText: String
        /// The completion day, once completed.
        let completed: String?
        /// The image's link, once completed.
        let image: String?
        /// "12.5 % of players".
        let rarity: String?
        /// The player's own state (shown beside the friend's).
        let myStatus: Status
        /// When comparing: whether and when the friend completed it.
        let friendStatus: Status?
    }

    /// A player's state on one achievement, in a few words and the day it was completed.
    struct Status {
        let words: String
        let day: String?

        init(_ words: String, on date: Date? = nil) {
            self.words = words
            self.day = date.map(PageDates.day)
        }
    }

    /// A friend to compare with.
    struct Friend {
        /// The player id (the compare form's value; never shown).
        let id: String
        let alias: String
        let selected: Bool
    }

    let chrome: PageChrome
    let bundleID: String, gameName: String
    let points: Int, maximumPoints: Int
    let rows: [Row]
    let friends: [Friend]
    /// Whether a friend's completions are shown beside the player's. (Templates look a name up in the enclosing
    /// objects when the nearest has it nil: a section on an optional must never enclose another object with the
    /// same field names.)
    let comparing: Bool
    let friendAlias: String?, friendPoints: Int?
    let leaderboardsLink: String, playLink: String, formAction: String
}
