import GameCenterProtocol

/// An activity a game offers (the manifest's `activities`, Apple's `GKGameActivityDefinition`): something players do
/// together, which they can join with a party code.
public struct ActivityDefinition: Sendable, Equatable {
    /// Unique in the game.
    public var identifier: String
    public var title: LocalizedText
    public var details: LocalizedText?
    /// The players one match of the activity takes (both nil, or both set with min ≤ max).
    public var minPlayers: Int?
    public var maxPlayers: Int?
    public var playStyle: ActivityPlayStyle
    /// Whether players join each other with a party code (needs `maxPlayers` of 2 or more).
    public var supportsPartyCode: Bool
    /// Properties every activity of this definition starts with.
    public var defaultProperties: [String: String]

    /// The most activity definitions per game.
    public static let maximumPerGame = 100
    /// The players an activity's match may name.
    public static let playersRange = 1...16
    /// The most properties an activity has, and the lengths of their keys and values.
    public static let maximumProperties = 20
    public static let propertyKeyLengths = 1...64
    public static let propertyValueMaximumLength = 256
}
