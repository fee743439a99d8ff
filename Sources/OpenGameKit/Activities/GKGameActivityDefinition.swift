import Foundation
import GameCenterProtocol

/// How an activity is played (Apple's `GKGameActivityPlayStyle`).
public enum GKGameActivityPlayStyle: Sendable, Equatable {
    case unspecified
    /// Everyone plays at the same time (a real-time match).
    case synchronous
    /// Players take turns or play apart.
    case asynchronous

    init(_ style: ActivityPlayStyle) {
        switch style {
        case .unspecified: self = .unspecified
        case .synchronous: self = .synchronous
        case .asynchronous: self = .asynchronous
        }
    }
}

/// An activity the game offers, as its manifest defines it (`activities`): something players do together, joining each
/// other with a party code when it supports one. Start one with ``GKGameActivity/start(definition:partyCode:in:)``.
public final class GKGameActivityDefinition: Sendable {
    /// The definition's identifier in the manifest.
    public let identifier: String
    /// Title and details in the device's locale.
    public let title: String
    public let details: String?
    /// The players one match of the activity takes (nil: the activity is not played as a match).
    public let minPlayers: Int?
    public let maxPlayers: Int?
    /// How it is played: together at once, or apart.
    public let playStyle: GKGameActivityPlayStyle
    /// Whether players join each other with a party code.
    public let supportsPartyCode: Bool
    /// Properties every activity of this definition starts with.
    public let defaultProperties: [String: String]
    let gameCenter: GKGameCenter

    init(_ info: ActivityDefinitionInfo, in gameCenter: GKGameCenter) {
        identifier = info.identifier
        title = info.title
        details = info.details
        minPlayers = info.minPlayers
        maxPlayers = info.maxPlayers
        playStyle = GKGameActivityPlayStyle(info.playStyle)
        supportsPartyCode = info.supportsPartyCode
        defaultProperties = info.defaultProperties
        self.gameCenter = gameCenter
    }

    /// The game's activity definitions in manifest order (only those named in `identifiers`, when given).
    public static func loadGameActivityDefinitions(IDs identifiers: [String]? = nil, in gameCenter: GKGameCenter = .default) async throws
        -> [GKGameActivityDefinition]
    {
        let list = try await gameCenter.authenticated(.get, "/v1/activity-definitions", as: ActivityDefinitionList.self)
        return list.definitions.filter { identifiers?.contains($0.identifier) ?? true }.map { GKGameActivityDefinition($0, in: gameCenter) }
    }
}
