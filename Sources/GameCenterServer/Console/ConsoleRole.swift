/// What a studio console user may do. Each role may do everything the roles before it may.
public enum ConsoleRole: String, CaseIterable, Sendable, Comparable {
    /// Sees every page; changes nothing.
    case readOnly = "read-only"
    /// Also ends players' sessions, hides and shows them on boards, bans and unbans them, downloads their data.
    case support
    /// Also erases scores, resets achievements, deletes accounts, checks and reloads manifests, downloads a game's data.
    case developer
    /// Also manages server keys, webhooks and console users, and downloads the whole server's data.
    case owner

    /// The roles' names, for help texts: `owner|developer|support|read-only`.
    public static var names: String { allCases.reversed().map(\.rawValue).joined(separator: "|") }

    /// Whether `a` may do less than `b`.
    public static func < (a: ConsoleRole, b: ConsoleRole) -> Bool {
        a.rank < b.rank
    }

    /// Whether this role may do what `needed` may.
    func allows(_ needed: ConsoleRole) -> Bool { self >= needed }

    private var rank: Int { Self.allCases.firstIndex(of: self)! }
}

/// An action of the console and the least role that may take it: the one table the pages and the tests read.
enum ConsoleAction: String, CaseIterable, Sendable {
    case endSessions = "end a player's sessions"
    case hide = "hide or show a player on a game's boards"
    case ban = "ban or unban a player"
    case resetPassword = "give a player a new password"
    case eraseScores = "erase a player's scores"
    case resetAchievements = "reset a player's achievements"
    case downloadData = "download a player's data"
    case deleteAccount = "delete a player's account"
    case manifests = "check or reload game manifests"
    case exportGame = "download a game's data"
    case exportServer = "download the whole server's data"
    case keys = "manage server keys"
    case webhooks = "manage webhook endpoints"
    case users = "manage console users"

    /// The least role that may take the action.
    var role: ConsoleRole {
        switch self {
        case .endSessions, .hide, .ban, .resetPassword, .downloadData: .support
        case .eraseScores, .resetAchievements, .manifests, .deleteAccount, .exportGame: .developer
        case .keys, .webhooks, .users, .exportServer: .owner
        }
    }
}
