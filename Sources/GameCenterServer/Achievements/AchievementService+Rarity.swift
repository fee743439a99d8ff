import Foundation
import GameCenterProtocol
import GameCenterStorage

extension AchievementService {
    /// How rare each of the device's game's achievements is in its environment: the share (0…1) of the game's
    /// players who completed it, by identifier; nil when nobody played the game yet.
    func rarity(device: DeviceIdentity) async throws -> [String: Double]? {
        let counts = try await database.read {
            try await $0.achievementRarity(bundleID: device.game.bundleID, environment: device.environment.rawValue)
        }
        guard counts.players > 0 else { return nil }
        return Dictionary(
            uniqueKeysWithValues: device.game.achievements.map {
                ($0.identifier, Double(counts.completions[$0.identifier] ?? 0) / Double(counts.players))
            })
    }
}
