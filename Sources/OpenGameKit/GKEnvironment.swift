/// The two worlds of every game: `sandbox` for development and tests, `live` for players. Accounts, friends
/// and game data of one are invisible to the other.
public enum GKEnvironment: String, Sendable, Codable {
    case sandbox
    case live
}
