import Foundation

/// A page of the Game Center app a game opens for its player: what a standard screen's `present()` shows.
public enum AppScreen: String, WireEnum, Sendable {
    /// The game's leaderboards (`category`, `timeScope`).
    case leaderboards
    /// The game's achievements.
    case achievements
    /// The friends page with a friend request written (`recipients`, `message`).
    case friendRequest
    /// The player's match invitations.
    case invitations
}

/// `POST /v1/app-tickets`: a link that opens a page of the Game Center app signed in as the caller, once, within
/// ``Limits/appTicketLifetimeSeconds``.
public struct AppTicketRequest: Codable, Sendable, Equatable {
    /// The page to open.
    public var screen: AppScreen
    /// Leaderboards: the leaderboard (nil: the game's default).
    public var category: String?
    /// Leaderboards: the time scope (nil: `today`, as the seed's leaderboard screen).
    public var timeScope: LeaderboardTimeScope?
    /// Friend request: the recipient, by account name or alias.
    public var recipient: String?
    /// Friend request: the message.
    public var message: String?

    public init(
        screen: AppScreen, category: String? = nil, timeScope: LeaderboardTimeScope? = nil, recipient: String? = nil, message: String? = nil
    ) {
        self.screen = screen
        self.category = category
        self.timeScope = timeScope
        self.recipient = recipient
        self.message = message
    }
}

/// A single-use link to a page of the Game Center app: open the server's address followed by `path` before
/// `expiresAt`. It signs the browser in as the player (a web session that ends no later than the game's) and shows the
/// page; a second use, or a use after `expiresAt`, shows that the link has expired.
public struct AppTicket: Codable, Sendable, Equatable {
    /// The link's path on the server, e.g. `/app-tickets/3q2…`.
    public var path: String
    /// When the link stops working.
    public var expiresAt: Date

    public init(path: String, expiresAt: Date) {
        self.path = path
        self.expiresAt = expiresAt
    }
}
