import Foundation
import GameCenterProtocol
import Synchronization

/// The standard screens this device presented as pages of the Game Center app, by presentation id: each hears what
/// the player does there (``ScreenPresentation`` events) — the pages shown, with the leaderboard page's choices, and
/// the end: Done at once; a page left (closed, most likely) unless a page of it is shown again within
/// ``leaveGrace`` (a reload).
final class PresentedScreens: Sendable {
    /// How long a left page may take to be shown again before the screen counts as closed.
    static let leaveGrace: Duration = .seconds(3)
    /// The most presentations followed at once; past it the oldest is dropped (its screen then never finishes).
    static let limit = 100

    /// What one presentation's screen is told.
    struct Follower: Sendable {
        /// A page was shown.
        let shown: @Sendable (ScreenPresentation) -> Void
        /// The screen finished (Done, or closed).
        let finished: @Sendable () -> Void
        /// Counts the presentation's changes: a leave finishes it only if nothing came after.
        var changes = 0
        /// When it began to be followed, to drop the oldest.
        let order: Int
    }

    private struct State {
        var followers: [String: Follower] = [:]
        var started = 0
    }

    private let state = Mutex(State())

    /// Follows `presentationID` until it finishes.
    func follow(_ presentationID: String, shown: @escaping @Sendable (ScreenPresentation) -> Void, finished: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.started += 1
            if state.followers[presentationID] == nil, state.followers.count >= Self.limit,
                let oldest = state.followers.min(by: { $0.value.order < $1.value.order })?.key
            {
                state.followers[oldest] = nil
            }
            state.followers[presentationID] = Follower(shown: shown, finished: finished, order: state.started)
        }
    }

    /// Hands `presentation` to its follower; presentations not followed here (another device's, a finished one's) are
    /// ignored.
    func handle(_ presentation: ScreenPresentation) {
        let id = presentation.presentationID
        let (follower, change) = state.withLock { state -> (Follower?, Int) in
            guard var follower = state.followers[id] else { return (nil, 0) }
            follower.changes += 1
            state.followers[id] = presentation.change == .done ? nil : follower
            return (follower, follower.changes)
        }
        guard let follower else { return }
        switch presentation.change {
        case .shown:
            follower.shown(presentation)
        case .done:
            follower.finished()
        case .left:
            Task {
                try? await Task.sleep(for: Self.leaveGrace)
                let closed = state.withLock { state -> Bool in
                    guard state.followers[id]?.changes == change else { return false }
                    state.followers[id] = nil
                    return true
                }
                if closed { follower.finished() }
            }
        }
    }
}
