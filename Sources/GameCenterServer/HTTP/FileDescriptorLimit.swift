#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`), which bounds how many connections it can hold.
public enum FileDescriptorLimit {
    /// The soft limit now in force.
    public static var current: Int {
        var limit = rlimit()
        guard getrlimit(resourceLimit, &limit) == 0 else { return 1024 }
        return clamp(limit.rlim_cur)
    }

    /// Raises the soft limit to the hard limit (on macOS at most `OPEN_MAX`, the most it accepts) and returns the
    /// limit before and after; a refusal leaves the limit as it was.
    @discardableResult
    public static func raiseToHard() -> (before: Int, after: Int) {
        var limit = rlimit()
        guard getrlimit(resourceLimit, &limit) == 0 else { return (current, current) }
        let before = clamp(limit.rlim_cur)
        #if canImport(Darwin)
        limit.rlim_cur = min(limit.rlim_max, rlim_t(OPEN_MAX))
        #else
        limit.rlim_cur = limit.rlim_max
        #endif
        _ = setrlimit(resourceLimit, &limit)
        return (before, current)
    }

    #if canImport(Darwin)
    private static let resourceLimit = RLIMIT_NOFILE
    #else
    private static let resourceLimit = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #endif

    /// `RLIM_INFINITY` and other huge values as a usable count.
    private static func clamp(_ value: rlim_t) -> Int {
        Int(min(value, rlim_t(Int32.max)))
    }
}
