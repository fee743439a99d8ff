import Foundation

/// Account tunables; the defaults are what a public server should run with.
public struct AccountPolicy: Sendable {
    /// How long a session lasts from sign-in, in seconds.
    public var sessionLifetime: TimeInterval = 30 * 24 * 3600
    /// bcrypt cost for new passwords (each step doubles the work).
    public var bcryptCost: UInt8 = 10
    /// Failed sign-ins for one account allowed inside `failureWindow` before it is locked.
    public var allowedFailures: Int64 = 5
    /// Failed sign-ins from one client address (an IPv4 address or an IPv6 /64), across all accounts, allowed inside
    /// `failureWindow` before the address is locked, with the same growing lockout as an account. A locked address
    /// blocks only itself: its refused attempts are not checked and count against no account, so it cannot keep a
    /// player out for longer than the account lockout its last counted failures earned (at most `maximumLockout`).
    /// Loopback peers (a reverse proxy on the same host) are not throttled by address.
    public var allowedAddressFailures: Int64 = 20
    /// Failures older than this many seconds are forgotten.
    public var failureWindow: TimeInterval = 15 * 60
    /// First lockout in seconds (of an account or an address); each further failure doubles it, up to `maximumLockout`.
    public var firstLockout: TimeInterval = 30
    /// Longest lockout in seconds.
    public var maximumLockout: TimeInterval = 15 * 60

    /// The defaults.
    public init() {}
}
