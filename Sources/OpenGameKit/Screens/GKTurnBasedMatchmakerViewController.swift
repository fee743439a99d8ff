import Foundation
import GameCenterProtocol
import Synchronization

/// Hears what the player chose on a turn-based matchmaking screen (GameKit's
/// `GKTurnBasedMatchmakerViewControllerDelegate`).
public protocol GKTurnBasedMatchmakerViewControllerDelegate: AnyObject, Sendable {
    /// The player chose a match, an existing one or a new one: dismiss the screen and show the match.
    func turnBasedMatchmakerViewController(_ viewController: GKTurnBasedMatchmakerViewController, didFind match: GKTurnBasedMatch)
    /// The player closed the screen without choosing (or pressed Done on the Game Center app's page): dismiss it.
    func turnBasedMatchmakerViewControllerWasCancelled(_ viewController: GKTurnBasedMatchmakerViewController)
    /// A new match could not be found or started: dismiss the screen and say why.
    func turnBasedMatchmakerViewController(_ viewController: GKTurnBasedMatchmakerViewController, didFailWithError error: any Error)
}

/// The standard turn-based matchmaking screen (GameKit's `GKTurnBasedMatchmakerViewController`), as a model: the
/// player's matches of this game to go back to (when ``showExistingMatches``) and a way to start a new one for the
/// screen's ``matchRequest``. A game draws it from ``loadExistingMatches()`` with a button per match calling
/// ``choose(_:)`` and one calling ``startNewMatch()``; or calls ``present()`` to show the Game Center app's turns page
/// (every game's matches, invitations to answer, results) in the player's browser, signed in, and hears
/// `…WasCancelled` when the player presses Done there.
public final class GKTurnBasedMatchmakerViewController: Sendable {
    private struct State {
        weak var delegate: (any GKTurnBasedMatchmakerViewControllerDelegate)?
        var showExistingMatches = true
    }

    /// What a new match is started or found for.
    public let matchRequest: GKMatchRequest
    private let state = Mutex(State())
    private let gameCenter: GKGameCenter

    /// A screen for `matchRequest` on the device's player.
    public init(matchRequest: GKMatchRequest, in gameCenter: GKGameCenter = .default) {
        self.matchRequest = matchRequest
        self.gameCenter = gameCenter
    }

    /// Hears what the player chose.
    public weak var turnBasedMatchmakerDelegate: (any GKTurnBasedMatchmakerViewControllerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Whether the screen lists the player's existing matches (default true); false shows only a new match.
    public var showExistingMatches: Bool {
        get { state.withLock { $0.showExistingMatches } }
        set { state.withLock { $0.showExistingMatches = newValue } }
    }

    /// What the screen lists: the player's matches of this game, those whose turn is theirs first, then those waiting
    /// for others, then the finished ones (each group oldest first); empty when ``showExistingMatches`` is false.
    public func loadExistingMatches() async throws -> [GKTurnBasedMatch] {
        guard showExistingMatches else { return [] }
        let me = gameCenter.localPlayer.playerID
        let matches = try await GKTurnBasedMatch.loadMatches(in: gameCenter)
        func group(_ match: GKTurnBasedMatch) -> Int {
            if match.status == .ended { return 2 }
            return match.currentParticipant?.playerID == me ? 0 : 1
        }
        return matches.enumerated().sorted { (group($0.element), $0.offset) < (group($1.element), $1.offset) }.map(\.element)
    }

    /// The player chose `match` on the screen: the delegate hears `didFind`.
    public func choose(_ match: GKTurnBasedMatch) {
        turnBasedMatchmakerDelegate?.turnBasedMatchmakerViewController(self, didFind: match)
    }

    /// The player chose a new match: one with an open seat that fits ``matchRequest``, or a new one
    /// (``GKTurnBasedMatch/find(for:in:)``); the delegate hears `didFind`, or `didFailWithError`.
    public func startNewMatch() async {
        do {
            let match = try await GKTurnBasedMatch.find(for: matchRequest, in: gameCenter)
            turnBasedMatchmakerDelegate?.turnBasedMatchmakerViewController(self, didFind: match)
        } catch {
            turnBasedMatchmakerDelegate?.turnBasedMatchmakerViewController(self, didFailWithError: error)
        }
    }

    /// The player closed the screen: the delegate hears `…WasCancelled`.
    public func cancel() {
        turnBasedMatchmakerDelegate?.turnBasedMatchmakerViewControllerWasCancelled(self)
    }

    /// A link to the Game Center app's turns page, signed in as the player, for the game's own web view. It works
    /// once, within a minute. The player answers invitations and sees their matches there and plays them in the game;
    /// when they press Done or close the page, the delegate hears `…WasCancelled`.
    public func presentationURL() async throws -> URL {
        try await GameCenterAppLink.url(AppTicketRequest(screen: .turns), in: gameCenter, finished: { [weak self] in self?.cancel() })
    }

    /// Opens the turns page in the player's browser (``presentationURL()``).
    public func present() async throws {
        try GameCenterAppLink.open(try await presentationURL())
    }
}
