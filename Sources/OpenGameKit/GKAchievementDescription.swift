import Foundation
import GameCenterProtocol
import Synchronization

/// An achievement as the game's manifest describes it, localized for the device's locale (falling back to the
/// game's default). A hidden achievement the player has not reported progress on has empty texts and no image.
public final class GKAchievementDescription: Sendable, CustomStringConvertible {
    private let info: AchievementDescriptionInfo
    private let gameCenter: GKGameCenter
    private let loadedImage = Mutex<Data?>(nil)

    init(info: AchievementDescriptionInfo, gameCenter: GKGameCenter) {
        self.info = info
        self.gameCenter = gameCenter
    }

    public var identifier: String { info.identifier }
    public var title: String { info.title }
    /// Shown once the achievement is completed.
    public var achievedDescription: String { info.achievedDescription }
    /// Shown until the achievement is completed.
    public var unachievedDescription: String { info.unachievedDescription }
    /// Points earned by completing it.
    public var maximumPoints: Int { info.maximumPoints }
    /// Hidden achievements are revealed by the first report of progress.
    public var isHidden: Bool { info.isHidden }
    /// The completed image, once ``loadImage()`` has loaded it.
    public var image: Data? { loadedImage.withLock { $0 } }

    public var description: String { "\(identifier): \(title) (\(maximumPoints) points)" }

    /// Loads the completed image (PNG) from the server.
    public func loadImage() async throws -> Data {
        guard info.hasImage else {
            throw GKError(.invalidParameter, "achievement '\(identifier)' has no completed image (or is not revealed yet)")
        }
        let data = try await gameCenter.authenticated(.get, "/v1/achievement-descriptions/\(pathComponent(identifier))/image", as: Data.self)
        loadedImage.withLock { $0 = data }
        return data
    }

    /// Loads the completed image and calls `completionHandler` once with it, or nil and the error, as the seed's
    /// `loadImageWithCompletionHandler:` does.
    public func loadImage(completionHandler: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.loadImage() }
    }

    /// The game's achievement descriptions.
    ///
    /// When a load fails because the server cannot be reached (or is failing), the error carries the last
    /// descriptions this device loaded for the player: `error.partialResult(as: [GKAchievementDescription].self)`.
    public static func loadAchievementDescriptions(in gameCenter: GKGameCenter = .default) async throws -> [GKAchievementDescription] {
        try await gameCenter.loadKeepingLast("/v1/achievement-descriptions", as: AchievementDescriptionList.self) { list in
            list.descriptions.map { GKAchievementDescription(info: $0, gameCenter: gameCenter) }
        }
    }

    /// Loads the game's achievement descriptions and calls `completionHandler` once with them (or, after a failure,
    /// the last ones loaded, if any) and any error, as the seed's `loadAchievementDescriptionsWithCompletionHandler:`
    /// does.
    public static func loadAchievementDescriptions(
        in gameCenter: GKGameCenter = .default, completionHandler: @escaping @Sendable ([GKAchievementDescription]?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await loadAchievementDescriptions(in: gameCenter) }
    }

    /// The standard image for an achievement not completed yet (PNG, shipped with the SDK).
    public static let incompleteAchievementImage: Data = resource("incomplete-achievement")
    /// A standard image for a completed achievement whose own image is not loaded yet (PNG, shipped with the SDK).
    public static let placeholderCompletedAchievementImage: Data = resource("placeholder-completed-achievement")

    private static func resource(_ name: String) -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: "png", subdirectory: "Resources"),
            let data = try? Data(contentsOf: url)
        else { preconditionFailure("the SDK's resource \(name).png is missing from its bundle") }
        return data
    }
}
