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
    /// The player's turn-based matches in every game.
    case turns
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
    /// Names the page's presentation in the ``ScreenPresentation`` events the player's devices receive while it is
    /// open (what the player chose there, and when they closed it). Nil from servers that do not send them.
    public var presentationID: String?

    public init(path: String, expiresAt: Date, presentationID: String? = nil) {
        self.path = path
        self.expiresAt = expiresAt
        self.presentationID = presentationID
    }
}

/// Payload of ``EventKind/screenPresentation``: a page opened through an ``AppTicket`` was shown, left or finished
/// in the player's browser — what the game's standard screen follows (its `…DidFinish`, and the leaderboard screen's
/// `category` and `timeScope`).
public struct ScreenPresentation: Codable, Sendable, Equatable {
    /// What happened to the page.
    public enum Change: String, WireEnum, Sendable {
        /// A page of the presentation was shown (opened, reloaded or navigated to).
        case shown
        /// The page was left without going to another page of the app: closed, most likely (a reload shows it again
        /// at once).
        case left
        /// The player pressed Done: the screen is finished.
        case done
    }

    /// The ticket's ``AppTicket/presentationID``.
    public var presentationID: String
    /// What happened to the page.
    public var change: Change
    /// Shown pages of a game (its leaderboards, its achievements): the game's bundle id.
    public var bundleID: String?
    /// Shown leaderboard pages: the leaderboard the player is looking at.
    public var category: String?
    /// Shown leaderboard pages: the time scope the player is looking at.
    public var timeScope: LeaderboardTimeScope?

    public init(
        presentationID: String, change: Change, bundleID: String? = nil, category: String? = nil, timeScope: LeaderboardTimeScope? = nil
    ) {
        self.presentationID = presentationID
        self.change = change
        self.bundleID = bundleID
        self.category = category
        self.timeScope = timeScope
    }
}
