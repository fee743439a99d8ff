import Foundation

/// Account tunables; the defaults are what a public server should run with.
public struct AccountPolicy: Sendable {
    /// How long a session lasts from sign-in, in seconds.
    public var sessionLifetime: TimeInterval = 30 * 24 * 3600
    /// bcrypt cost for new passwords (each step doubles the work).
    public var bcryptCost: UInt8 = 10
    /// Failed sign-ins for one account allowed inside `failureWindow` before it is locked.
    public var allowedFailures: Int64 = 5
    /// Failures older than this many seconds are forgotten.
    public var failureWindow: TimeInterval = 15 * 60
    /// First lockout in seconds; each further failure doubles it, up to `maximumLockout`.
    public var firstLockout: TimeInterval = 30
    /// Longest lockout in seconds.
    public var maximumLockout: TimeInterval = 15 * 60

    /// The defaults.
    public init() {}
}
