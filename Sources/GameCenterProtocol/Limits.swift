import Foundation

/// Limits shared by the server (which enforces them) and the SDK (which checks them before sending).
public enum Limits {
    /// Account names: 3…64 characters of letters, digits and `. _ - @ +`; compared case-insensitively.
    public static let accountNameLength = 3...64
    /// Passwords: 8…128 characters.
    public static let passwordLength = 8...128
    /// Aliases: 1…32 characters after trimming white space; no control characters.
    public static let aliasLength = 1...32
    /// Status messages: at most 140 characters.
    public static let maximumStatusLength = 140
    /// Friend request messages: at most 280 characters.
    public static let maximumFriendRequestMessageLength = 280
    /// Player ids in one request (player lookup, friend request).
    public static let maximumPlayerIDsPerRequest = 100
    /// Size of a JSON request body, in bytes.
    public static let maximumRequestBodyBytes = 64 * 1024
    /// Largest reliable match or session message, in bytes (the seed's 87 KB).
    public static let maximumReliableMessageBytes = 87 * 1024
    /// Largest unreliable match or session message, in bytes.
    public static let maximumUnreliableMessageBytes = 1000
    /// Leaderboards per game, aggregates included.
    public static let maximumLeaderboardsPerGame = 25
    /// Leaderboard sets per game (Apple's limit); each holds at most ``maximumLeaderboardsPerSet``. Boards in a set
    /// do not count against ``maximumLeaderboardsPerGame``, which bounds the boards outside every set.
    public static let maximumLeaderboardSetsPerGame = 100
    /// Leaderboards per set.
    public static let maximumLeaderboardsPerSet = 100
    /// Scores in one report request.
    public static let maximumScoresPerReport = 100
    /// Integers one score may carry for the studio's verifier.
    public static let maximumScoreDetails = 64
    /// Bytes of attachments (input logs, replays) one score report may carry in all: 1 MiB.
    public static let maximumScoreAttachmentBytes = 1024 * 1024
    /// Widest rank range one leaderboard query may ask for.
    public static let maximumLeaderboardRange = 100
    /// Players in a match, relayed or hosted (the seed said 2…4 relayed; Game Center today allows 16).
    public static let matchPlayers = 2...16
    /// How long `queryActivity` looks back, in seconds.
    public static let matchmakingActivityWindowSeconds = 120
    /// How long a device's outbox keeps a report it could not deliver (30 days); a score's date is never earlier than
    /// this before the server's clock.
    public static let maximumReportAge: TimeInterval = 30 * 24 * 60 * 60
    /// How long a link to a page of the Game Center app (``AppTicket``) can be used, in seconds.
    public static let appTicketLifetimeSeconds = 60
    /// How long a game's sign-in through the Game Center app (``DeviceSignIn``) waits for the player, in seconds.
    public static let deviceSignInLifetimeSeconds = 300
    /// Achievement points per achievement.
    public static let achievementPointsRange = 1...100
    /// Achievement points per game.
    public static let maximumAchievementPointsPerGame = 1000
}
