/// How ``GKLocalPlayer/authenticate(_:)`` signs a player in. The seed's sign-in sheet is the game's to draw;
/// it passes what the player typed.
public enum GKCredentials: Sendable {
    /// Creates an account and signs in. Underage accounts cannot send or accept friend requests.
    case signUp(account: String, password: String, alias: String, underage: Bool = false)
    /// Signs in to an existing account.
    case signIn(account: String, password: String)
    /// Resumes the session this device saved at its last sign-in, if it is still valid.
    case stored
}
