import Foundation
import GameCenterProtocol
import Synchronization

/// Hears when the player closes an achievements screen (the seed's `GKAchievementViewControllerDelegate`).
public protocol GKAchievementViewControllerDelegate: AnyObject, Sendable {
    /// The player closed the screen: dismiss it.
    func achievementViewControllerDidFinish(_ viewController: GKAchievementViewController)
}

/// The standard achievements screen (the seed's `GKAchievementViewController`), as a model: a game draws it with its
/// own UI from ``loadEntries()``, or calls ``present()`` to show the Game Center app's achievements page in the
/// player's browser, signed in. ``dismiss()`` tells the delegate.
public final class GKAchievementViewController: Sendable {
    /// One line of the screen: an achievement and the player's progress on it.
    public struct Entry: Sendable {
        /// The achievement as the game's manifest describes it.
        public let achievementDescription: GKAchievementDescription
        /// Nil when the player has not reported any progress.
        public let achievement: GKAchievement?
    }

    private struct State {
        weak var delegate: (any GKAchievementViewControllerDelegate)?
    }

    private let state = Mutex(State())
    private let gameCenter: GKGameCenter

    /// An achievements screen for the device's player.
    public init(in gameCenter: GKGameCenter = .default) {
        self.gameCenter = gameCenter
    }

    /// Hears when the screen closes.
    public weak var achievementDelegate: (any GKAchievementViewControllerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// What the screen shows: the game's achievements in the manifest's order with the player's progress; hidden ones
    /// only once the player has made progress on them, as the seed says.
    public func loadEntries() async throws -> [Entry] {
        async let descriptions = GKAchievementDescription.loadAchievementDescriptions(in: gameCenter)
        async let achievements = GKAchievement.loadAchievements(in: gameCenter)
        let progress = Dictionary(try await achievements.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        return try await descriptions.compactMap { description in
            let achievement = progress[description.identifier]
            if description.isHidden && achievement == nil { return nil }
            return Entry(achievementDescription: description, achievement: achievement)
        }
    }

    /// A link to the Game Center app's achievements page of this game, signed in as the player, for the game's own web
    /// view. It works once, within a minute. When the player presses Done there or closes the page, the delegate hears
    /// `achievementViewControllerDidFinish`.
    public func presentationURL() async throws -> URL {
        try await GameCenterAppLink.url(AppTicketRequest(screen: .achievements), in: gameCenter, finished: { [weak self] in self?.dismiss() })
    }

    /// Opens the achievements page in the player's browser (``presentationURL()``).
    public func present() async throws {
        try GameCenterAppLink.open(try await presentationURL())
    }

    /// Closes the screen: the delegate hears `achievementViewControllerDidFinish`.
    public func dismiss() {
        achievementDelegate?.achievementViewControllerDidFinish(self)
    }
}
