import Foundation
import GameCenterStorage

/// The sign-in throttle's rule, shared by players' sign-ins (``AccountService``) and the studio console's: failures
/// counted per account name (in a namespace, the environment or `console`) and per client address, with a lockout
/// that grows with each failure beyond the allowance.
struct SignInThrottle: Sendable {
    /// The allowances and lockouts.
    let policy: AccountPolicy

    /// Counts an attempt against the address and the account, or throws the throttle error when either is locked;
    /// returns the lock the count put on the address, if it put one. The address row is locked first: every
    /// transaction takes the two in this order, so two nodes never wait on each other.
    func countAttempt(namespace: String, account: String, address: ClientAddress?, now: Int64, in storage: StorageSession) async throws -> Int64? {
        var addressFailures: SignInFailures?
        if let address {
            let failures = try await storage.lockAddressSignInFailures(address: address.key, now: now)
            if failures.lockedUntil > now { throw APIError.addressThrottled(retryAfterSeconds: Self.seconds(until: failures.lockedUntil, now: now)) }
            addressFailures = failures
        }
        let failures = try await storage.lockSignInFailures(environment: namespace, accountName: account, now: now)
        if failures.lockedUntil > now { throw APIError.signInThrottled(retryAfterSeconds: Self.seconds(until: failures.lockedUntil, now: now)) }
        try await storage.setSignInFailures(environment: namespace, accountName: account, counting(failures, allowed: policy.allowedFailures, now: now))
        guard let address, let addressFailures else { return nil }
        let counted = counting(addressFailures, allowed: policy.allowedAddressFailures, now: now)
        try await storage.setAddressSignInFailures(address: address.key, counted)
        return counted.lockedUntil != addressFailures.lockedUntil ? counted.lockedUntil : nil
    }

    /// Takes a successful attempt's count back from its address and clears the account's failures: signing in to
    /// one's own account neither costs an address nor erases its failures. The lock the attempt's count put on the
    /// address (`lock`) goes too, if it is still the address's lock.
    func succeeded(namespace: String, account: String, address: ClientAddress?, lock: Int64?, now: Int64, in storage: StorageSession) async throws {
        if let address {
            var failures = try await storage.lockAddressSignInFailures(address: address.key, now: now)
            failures.failures = max(failures.failures - 1, 0)
            if let lock, failures.lockedUntil == lock { failures.lockedUntil = 0 }
            try await storage.setAddressSignInFailures(address: address.key, failures)
        }
        try await storage.clearSignInFailures(environment: namespace, accountName: account)
    }

    /// `failures` with one more attempt counted at `now`: an expired window with no lock running starts over, and
    /// reaching `allowed` locks for `firstLockout`, doubled for each attempt beyond it, up to `maximumLockout`.
    private func counting(_ failures: SignInFailures, allowed: Int64, now: Int64) -> SignInFailures {
        var state = failures
        if now - state.windowStart > Int64(policy.failureWindow * 1000) && state.lockedUntil <= now {
            state = SignInFailures(failures: 0, windowStart: now, lockedUntil: 0)
        }
        state.failures += 1
        if state.failures >= allowed {
            let doublings = Double(min(state.failures - allowed, 20))
            let lockout = min(policy.firstLockout * pow(2, doublings), policy.maximumLockout)
            state.lockedUntil = now + Int64(lockout * 1000)
        }
        return state
    }

    /// Whole seconds from `now` until `millis`, rounded up (a Retry-After).
    private static func seconds(until millis: Int64, now: Int64) -> Int {
        Int((millis - now + 999) / 1000)
    }
}
