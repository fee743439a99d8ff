import Foundation
import GameCenterProtocol
import Synchronization

/// Hears when the player closes a leaderboard screen (the seed's `GKLeaderboardViewControllerDelegate`).
public protocol GKLeaderboardViewControllerDelegate: AnyObject, Sendable {
    /// The player closed the screen: dismiss it.
    func leaderboardViewControllerDidFinish(_ viewController: GKLeaderboardViewController)
}

/// The standard leaderboard screen (the seed's `GKLeaderboardViewController`), as a model: a game draws it with its own
/// UI from ``loadScores()``, or calls ``present()`` to show the Game Center app's leaderboard page in the player's
/// browser, signed in. Set ``category`` and ``timeScope`` before presenting; keep them to open the screen where the
/// player left it, as the seed suggests. ``dismiss()`` tells the delegate.
///
/// Presented, the screen follows the page: ``category`` and ``timeScope`` take what the player chooses there, and the
/// delegate hears `leaderboardViewControllerDidFinish` when the player presses Done or closes the page.
public final class GKLeaderboardViewController: Sendable {
    private struct State {
        var category: String?
        var timeScope = GKLeaderboard.TimeScope.today
        weak var delegate: (any GKLeaderboardViewControllerDelegate)?
    }

    private let state = Mutex(State())
    private let gameCenter: GKGameCenter

    /// A leaderboard screen for the device's player.
    public init(in gameCenter: GKGameCenter = .default) {
        self.gameCenter = gameCenter
    }

    /// Hears when the screen closes.
    public weak var leaderboardDelegate: (any GKLeaderboardViewControllerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }
    /// The leaderboard shown; nil: the game's default.
    public var category: String? {
        get { state.withLock { $0.category } }
        set { state.withLock { $0.category = newValue } }
    }
    /// The reports shown; `today` unless set, as the seed's screen.
    public var timeScope: GKLeaderboard.TimeScope {
        get { state.withLock { $0.timeScope } }
        set { state.withLock { $0.timeScope = newValue } }
    }

    /// What the screen shows: the first 25 ranks of everyone on ``category`` in ``timeScope``; the board's
    /// `localPlayerScore` is the player's own entry.
    public func loadScores() async throws -> (scores: [GKScore], leaderboard: GKLeaderboard) {
        let (category, timeScope) = state.withLock { ($0.category, $0.timeScope) }
        let leaderboard = GKLeaderboard(in: gameCenter)
        leaderboard.category = category
        leaderboard.timeScope = timeScope
        leaderboard.range = 1...25
        return (try await leaderboard.loadScores(), leaderboard)
    }

    /// A link to the Game Center app's leaderboard page for ``category`` and ``timeScope``, signed in as the player,
    /// for the game's own web view. It works once, within a minute. While it is open, the choices made there reach
    /// ``category`` and ``timeScope``, and closing it reaches the delegate.
    public func presentationURL() async throws -> URL {
        let (category, timeScope) = state.withLock { ($0.category, $0.timeScope) }
        let bundleID = gameCenter.bundleID
        return try await GameCenterAppLink.url(
            AppTicketRequest(screen: .leaderboards, category: category, timeScope: timeScope.wire), in: gameCenter,
            shown: { [weak self] page in
                guard page.bundleID == bundleID else { return }
                self?.state.withLock { state in
                    if let category = page.category { state.category = category }
                    if let scope = page.timeScope { state.timeScope = GKLeaderboard.TimeScope(scope) }
                }
            },
            finished: { [weak self] in self?.dismiss() })
    }

    /// Opens the leaderboard page in the player's browser (``presentationURL()``).
    public func present() async throws {
        try GameCenterAppLink.open(try await presentationURL())
    }

    /// Closes the screen: the delegate hears `leaderboardViewControllerDidFinish`.
    public func dismiss() {
        leaderboardDelegate?.leaderboardViewControllerDidFinish(self)
    }
}
