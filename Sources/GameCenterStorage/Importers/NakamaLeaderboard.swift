/// A leaderboard (or tournament) as a Nakama server defines it in its `leaderboard` table: what a studio moves into
/// its game's manifest, since boards here are defined there and not in the database.
public struct NakamaLeaderboard: Sendable, Equatable {
    /// Nakama's id; it becomes the board's category.
    public var id: String
    /// Lower scores rank first (`sort_order` 0).
    public var ascending: Bool
    /// How Nakama combined a player's submissions (`operator`): `best`, `set`, `increment` or `decrement`. Boards here
    /// keep each player's best.
    public var scoreOperator: String
    /// The cron expression the board restarts on (`reset_schedule`), in UTC; nil for a board that never restarts.
    public var resetSchedule: String?
    /// Nakama's title (set on tournaments); empty for most leaderboards.
    public var title: String
    /// Nakama's description; empty for most leaderboards.
    public var description: String
    /// A tournament (`duration` > 0): its records are not carried (see the docs' importer section).
    public var isTournament: Bool
    /// Whether the id is a category this server accepts (letters, digits, `.`, `_`, `-`, up to 100, starting with a
    /// letter or digit); the records of a board whose id is not are left out.
    public var isValidCategory: Bool {
        id.wholeMatch(of: /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/) != nil
    }
}
