import Foundation
import GameCenterProtocol
import Synchronization

/// Hears how a sign-in screen ended.
public protocol GKSignInViewControllerDelegate: AnyObject, Sendable {
    /// The player is signed in (`error` nil), or the sign-in failed or was given up: dismiss the screen.
    func signInViewControllerDidFinish(_ viewController: GKSignInViewController, error: (any Error)?)
}

/// The standard sign-in screen, so that a game need not build its own: a form model (sign in or create an account,
/// with the server's rules checked as the player types, ``problems``) the game draws and ``submit()``s — or the Game
/// Center app's own sign-in, where the player signs in (or up) in the browser and confirms, with no password ever in
/// the game (``present()``, or ``presentationURL()`` and ``waitForConfirmation()`` for a game's own web view).
///
/// Either way the device's local player ends up authenticated, as ``GKLocalPlayer/authenticate(_:)`` does it, and the
/// delegate hears the outcome once.
public final class GKSignInViewController: Sendable {
    /// What the form does.
    public enum Mode: Sendable {
        /// Signs in to an existing account.
        case signIn
        /// Creates an account (with ``GKSignInViewController/alias``) and signs in.
        case signUp
    }

    private struct State {
        var mode = Mode.signIn
        var account = ""
        var password = ""
        var alias = ""
        var underage = false
        var pending: DeviceSignIn?
        weak var delegate: (any GKSignInViewControllerDelegate)?
    }

    private let state = Mutex(State())
    private let gameCenter: GKGameCenter

    /// A sign-in screen for the device.
    public init(in gameCenter: GKGameCenter = .default) {
        self.gameCenter = gameCenter
    }

    /// Hears how the screen ended.
    public weak var signInDelegate: (any GKSignInViewControllerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }
    /// Sign in (the default) or create an account.
    public var mode: Mode {
        get { state.withLock { $0.mode } }
        set { state.withLock { $0.mode = newValue } }
    }
    /// The account name typed.
    public var account: String {
        get { state.withLock { $0.account } }
        set { state.withLock { $0.account = newValue } }
    }
    /// The password typed.
    public var password: String {
        get { state.withLock { $0.password } }
        set { state.withLock { $0.password = newValue } }
    }
    /// Sign-up: the name other players see.
    public var alias: String {
        get { state.withLock { $0.alias } }
        set { state.withLock { $0.alias = newValue } }
    }
    /// Sign-up: the player is underage (no friend requests).
    public var underage: Bool {
        get { state.withLock { $0.underage } }
        set { state.withLock { $0.underage = newValue } }
    }

    /// What is wrong with the form as typed, by the server's rules (empty when it may be submitted): show them beside
    /// the fields. The server checks again, and has the last word (a taken name, a wrong password).
    public var problems: [String] {
        let current = state.withLock { $0 }
        var problems: [String] = []
        let account = current.account.trimmingCharacters(in: .whitespaces)
        if current.mode == .signUp {
            if !Limits.accountNameLength.contains(account.count) {
                problems.append("An account name has \(Limits.accountNameLength.lowerBound) to \(Limits.accountNameLength.upperBound) characters.")
            } else if !account.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-@+".unicodeScalars.contains($0)) }) {
                problems.append("An account name has only letters a–z, digits and . _ - @ +.")
            }
            if !Limits.passwordLength.contains(current.password.count) {
                problems.append("A password has \(Limits.passwordLength.lowerBound) to \(Limits.passwordLength.upperBound) characters.")
            }
            let alias = current.alias.trimmingCharacters(in: .whitespacesAndNewlines)
            if !Limits.aliasLength.contains(alias.count) {
                problems.append("An alias has \(Limits.aliasLength.lowerBound) to \(Limits.aliasLength.upperBound) characters.")
            }
        } else {
            if account.isEmpty { problems.append("Enter your account name.") }
            if current.password.isEmpty { problems.append("Enter your password.") }
        }
        return problems
    }

    /// Signs in (or up) with what was typed; the delegate hears the outcome. Throws the first of ``problems`` as
    /// `invalidParameter` without asking the server.
    public func submit() async throws {
        if let problem = problems.first { throw GKError(.invalidParameter, problem) }
        let current = state.withLock { $0 }
        let account = current.account.trimmingCharacters(in: .whitespaces)
        let credentials: GKCredentials =
            switch current.mode {
            case .signIn: .signIn(account: account, password: current.password)
            case .signUp: .signUp(account: account, password: current.password, alias: current.alias, underage: current.underage)
            }
        try await finish { try await self.gameCenter.localPlayer.authenticate(credentials) }
    }

    /// A link to the Game Center app's sign-in for this game, for the game's own web view: the player signs in (or
    /// up) there and confirms; ``waitForConfirmation()`` then signs the device in. It works for 5 minutes.
    public func presentationURL() async throws -> URL {
        let started = try await gameCenter.api.send(.POST, "/v1/device-sign-ins", as: DeviceSignIn.self)
        state.withLock { $0.pending = started }
        guard let url = URL(string: gameCenter.api.server.absoluteString.trimmingSuffix("/") + started.path) else {
            throw GKError(.unknown, "the server answered a sign-in page that is not a path: '\(started.path.prefix(100))'")
        }
        return url
    }

    /// Opens the Game Center app's sign-in in the player's browser and waits until the player confirms there (at most
    /// 5 minutes); the device is then signed in.
    public func present() async throws {
        try GameCenterAppLink.open(try await presentationURL())
        try await waitForConfirmation()
    }

    /// Waits until the player confirms the sign-in started by ``presentationURL()`` (asking the server every second,
    /// and on through network failures until the request's 5 minutes are over), then signs the device in. Throws
    /// `notAuthenticated` when it expired, `cancelled` when the task is cancelled.
    public func waitForConfirmation() async throws {
        guard let pending = state.withLock({ $0.pending }) else {
            throw GKError(.invalidParameter, "nothing to wait for: call presentationURL() or present() first")
        }
        try await finish {
            while true {
                let answer: DeviceSignInAnswer
                do {
                    answer = try await self.gameCenter.api.send(
                        .POST, "/v1/device-sign-ins/\(pending.requestID)/session", body: DeviceSignInClaim(secret: pending.secret),
                        as: DeviceSignInAnswer.self)
                } catch let error as GKError where error.isTransient && Date() < pending.expiresAt {
                    answer = DeviceSignInAnswer(session: nil)
                }
                if let session = answer.session {
                    self.state.withLock { $0.pending = nil }
                    try await self.gameCenter.localPlayer.authenticate(with: session)
                    return
                }
                do {
                    try await Task.sleep(for: .seconds(1))
                } catch {
                    throw GKError(.cancelled, "the sign-in through the Game Center app was given up before the player confirmed it")
                }
            }
        }
    }

    /// Runs a sign-in and tells the delegate how it ended.
    private func finish(_ signIn: @Sendable () async throws -> Void) async throws {
        do {
            try await signIn()
            signInDelegate?.signInViewControllerDidFinish(self, error: nil)
        } catch {
            signInDelegate?.signInViewControllerDidFinish(self, error: error)
            throw error
        }
    }
}

/// The answer of `POST /v1/device-sign-ins/{id}/session`: the session, or none while the player has not confirmed
/// (`202 {}`).
struct DeviceSignInAnswer: Decodable {
    let session: SessionResponse?

    init(session: SessionResponse?) {
        self.session = session
    }

    private enum CodingKeys: String, CodingKey {
        case token
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        session = container.contains(.token) ? try SessionResponse(from: decoder) : nil
    }
}
