/// HTTP header names a device sends with every request to identify its game and environment.
public enum DeviceHeader {
    /// The game's bundle identifier, e.g. `com.example.tapper`.
    public static let bundleID = "X-GameCenter-Bundle-ID"
    /// `sandbox` or `live`.
    public static let environment = "X-GameCenter-Environment"
    /// The game's client key, required when the game's manifest sets one.
    public static let clientKey = "X-GameCenter-Client-Key"
    /// The device's locale (BCP 47, e.g. `de-DE`), used for localized text.
    public static let locale = "X-GameCenter-Locale"
    /// The device's clock when it sent the request, in seconds since 1970 (as dates travel in JSON, e.g.
    /// `1795500000.25`). Sent with reports, it lets the server correct their dates for the device's clock offset.
    public static let deviceTime = "X-GameCenter-Device-Time"
}

/// The two environments of every game. Accounts, friends and game data of one never mix with the other's.
public enum Environment: String, WireEnum, Sendable {
    case sandbox
    case live
}
