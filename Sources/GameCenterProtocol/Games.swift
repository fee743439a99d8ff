/// `GET /v1/game`: what a device may know about the game it plays.
public struct GameSummary: Codable, Sendable, Equatable {
    public var bundleID: String
    public var name: String
    public var environment: Environment
    public var defaultLocale: String

    public init(bundleID: String, name: String, environment: Environment, defaultLocale: String) {
        self.bundleID = bundleID
        self.name = name
        self.environment = environment
        self.defaultLocale = defaultLocale
    }
}
