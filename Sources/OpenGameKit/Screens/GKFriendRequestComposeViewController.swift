import Foundation
import GameCenterProtocol
import Synchronization

/// Hears when the player closes a friend request screen (the seed's `GKFriendRequestComposeViewControllerDelegate`).
public protocol GKFriendRequestComposeViewControllerDelegate: AnyObject, Sendable {
    /// The player sent the request or cancelled: dismiss the screen.
    func friendRequestComposeViewControllerDidFinish(_ viewController: GKFriendRequestComposeViewController)
}

/// The standard screen for sending a friend request (the seed's `GKFriendRequestComposeViewController`), as a model:
/// add recipients (by player id, as in the seed's listing, or by account name or alias, as people know each other),
/// set a message, then ``send()`` from the game's own UI — or ``present()`` the Game Center app's friends page in the
/// player's browser with the request written, for the player to send. ``dismiss()`` tells the delegate.
public final class GKFriendRequestComposeViewController: Sendable {
    /// Recipients one request may have.
    public static let maxNumberOfRecipients = Limits.maximumPlayerIDsPerRequest

    private struct State {
        var playerIDs: [String] = []
        var accountNames: [String] = []
        var message: String?
        weak var delegate: (any GKFriendRequestComposeViewControllerDelegate)?
    }

    private let state = Mutex(State())
    private let gameCenter: GKGameCenter

    /// A friend request screen for the device's player.
    public init(in gameCenter: GKGameCenter = .default) {
        self.gameCenter = gameCenter
    }

    /// Hears when the screen closes.
    public weak var composeViewDelegate: (any GKFriendRequestComposeViewControllerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }
    /// The recipients added by player id.
    public var recipientPlayerIDs: [String] { state.withLock { $0.playerIDs } }
    /// The recipients added by account name or alias.
    public var recipientAccountNames: [String] { state.withLock { $0.accountNames } }
    /// The message sent with the request.
    public var message: String? { state.withLock { $0.message } }

    /// Adds recipients by player id (duplicates are kept once). Throws `invalidParameter` past ``maxNumberOfRecipients``.
    public func addRecipients(withPlayerIDs playerIDs: [String]) throws {
        try add { state in
            for id in playerIDs where !state.playerIDs.contains(id) { state.playerIDs.append(id) }
        }
    }

    /// Adds recipients by account name or exact alias (duplicates are kept once). Throws `invalidParameter` past
    /// ``maxNumberOfRecipients``.
    public func addRecipients(withAccountNames names: [String]) throws {
        try add { state in
            for name in names where !state.accountNames.contains(name) { state.accountNames.append(name) }
        }
    }

    /// Sets the message (at most 280 characters; the server refuses longer ones).
    public func setMessage(_ message: String?) {
        state.withLock { $0.message = message }
    }

    /// Sends the request to every recipient: those by id and those by name, each group all or none (see
    /// ``GKFriendRequest/send(to:message:in:)`` and ``GKFriendRequest/send(toAccounts:message:in:)``).
    public func send() async throws {
        let (ids, names, message) = state.withLock { ($0.playerIDs, $0.accountNames, $0.message) }
        guard !ids.isEmpty || !names.isEmpty else { throw GKError(.invalidParameter, "add at least one recipient before sending") }
        if !ids.isEmpty { try await GKFriendRequest.send(to: ids, message: message, in: gameCenter) }
        if !names.isEmpty { try await GKFriendRequest.send(toAccounts: names, message: message, in: gameCenter) }
    }

    /// A link to the Game Center app's friends page with the request written (the first recipient by name, else by the
    /// alias of the first by id; the page sends to one player at a time), signed in as the player, for the game's own
    /// web view. It works once, within a minute. When the player presses Done there or closes the page, the delegate
    /// hears `friendRequestComposeViewControllerDidFinish`.
    public func presentationURL() async throws -> URL {
        let (ids, names, message) = state.withLock { ($0.playerIDs, $0.accountNames, $0.message) }
        var recipient = names.first
        if recipient == nil, let id = ids.first {
            recipient = try await GKPlayer.loadPlayers(forIdentifiers: [id], in: gameCenter).first?.alias
        }
        return try await GameCenterAppLink.url(
            AppTicketRequest(screen: .friendRequest, recipient: recipient, message: message), in: gameCenter,
            finished: { [weak self] in self?.dismiss() })
    }

    /// Opens the friends page in the player's browser (``presentationURL()``).
    public func present() async throws {
        try GameCenterAppLink.open(try await presentationURL())
    }

    /// Closes the screen: the delegate hears `friendRequestComposeViewControllerDidFinish`.
    public func dismiss() {
        composeViewDelegate?.friendRequestComposeViewControllerDidFinish(self)
    }

    private func add(_ change: (inout State) -> Void) throws {
        try state.withLock { current in
            var next = current
            change(&next)
            guard next.playerIDs.count + next.accountNames.count <= Self.maxNumberOfRecipients else {
                throw GKError(.invalidParameter, "a friend request has at most \(Self.maxNumberOfRecipients) recipients")
            }
            current = next
        }
    }
}
