import Foundation

/// A challenge a game offers (the manifest's `challenges`): players challenge each other on one leaderboard, for a
/// while, with as many tries as the studio allows.
public struct ChallengeDefinition: Sendable, Equatable {
    /// Unique in the game.
    public var identifier: String
    public var title: LocalizedText
    public var details: LocalizedText?
    /// The leaderboard it is played on (not an aggregate).
    public var leaderboard: String
    /// Repeatable: only scores reported after joining count (needs a recurring board). Not repeatable: a participant's
    /// best on the board counts, also one from before they joined.
    public var isRepeatable: Bool
    /// The lengths a challenge on a classic board may be given, in seconds (Apple's 1 day, 3 days and 1 week by
    /// default); empty on a recurring board, where a challenge lasts the rest of the occurrence.
    public var durations: [Int64]
    /// The scores after joining that count per participant (nil: any number).
    public var attempts: Int?
    /// The most players in one challenge, its creator included.
    public var maxParticipants: Int

    /// Apple's lengths: 1 day, 3 days, 1 week.
    public static let defaultDurations: [Int64] = [86_400, 3 * 86_400, 7 * 86_400]
    /// Allowed lengths: 5 minutes to 90 days.
    public static let durationRange: ClosedRange<Int64> = 300...(90 * 86_400)
    /// Allowed participant limits (default 16).
    public static let maxParticipantsRange = 2...100
    /// Allowed attempt limits.
    public static let attemptsRange = 1...1000
    /// The most challenge definitions per game.
    public static let maximumPerGame = 100
}
