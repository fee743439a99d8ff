import Foundation
import GameCenterProtocol

/// The abuse limits: how often one player, one session or one client address may do what costs others something.
///
/// Each limit allows `count` actions per `period`, with bursts of up to `count` (a token bucket refilled evenly). A
/// refused action is answered `429 request.rate_limited` with `Retry-After`, and counted in the metric
/// `ratelimit.refused` under the limit's name. Limits are set with `gamecenter serve --rate-limit NAME=COUNT/SECONDS`
/// (`0/…` turns one off); `docs/RATE_LIMITS.md` lists them.
public struct RateLimits: Sendable, Equatable {
    /// One limit: `count` actions per `period`.
    public struct Limit: Sendable, Equatable, CustomStringConvertible {
        /// Actions allowed per period, and the largest burst; 0 turns the limit off.
        public var count: Int
        /// The period the count is spread over.
        public var period: Duration

        /// A limit of `count` per `period`.
        public init(count: Int, period: Duration) {
            self.count = count
            self.period = period
        }

        /// No limit.
        public static let off = Limit(count: 0, period: .seconds(1))

        /// Whether the limit refuses anything.
        public var isOn: Bool { count > 0 }

        /// Seconds in `period`.
        var periodSeconds: Double {
            Double(period.components.seconds) + Double(period.components.attoseconds) / 1e18
        }

        /// "30 per hour", "3 per 1 day", "600 per 60 s".
        public var description: String {
            let seconds = periodSeconds
            switch seconds {
            case 60: return "\(count) per minute"
            case 3600: return "\(count) per hour"
            case 86_400: return "\(count) per day"
            default: return "\(count) per \(seconds.formatted()) s"
            }
        }
    }

    /// What each limit counts, and its name in `--rate-limit` and in metrics.
    public enum Name: String, Sendable, CaseIterable {
        /// Accounts created from one client address.
        case signUps = "sign-ups"
        /// Sign-in attempts (right or wrong) from one client address.
        case signIns = "sign-ins"
        /// Friend requests one player sends.
        case friendRequests = "friend-requests"
        /// Friend requests from one player to the same other player.
        case friendRequestsToOnePlayer = "friend-requests-to-one-player"
        /// Players one player invites to matches.
        case invitations = "invitations"
        /// Invitations from one player to the same other player.
        case invitationsToOnePlayer = "invitations-to-one-player"
        /// Scores and achievement progress entries one player reports.
        case reports = "reports"
        /// Realtime channels one session opens.
        case realtimeChannels = "realtime-channels"
        /// Turn-based writes one player makes: new matches, turns, saves, quits, ends, exchanges and their replies,
        /// rematches (each one is a stored change pushed to every participant).
        case turnWrites = "turn-writes"
        /// Requests one server key makes to the game-server routes.
        case serverRequests = "server-requests"

        /// What the limit counts, for messages.
        var counted: String {
            switch self {
            case .signUps: "accounts created from this network address"
            case .signIns: "sign-ins from this network address"
            case .friendRequests: "friend requests"
            case .friendRequestsToOnePlayer: "friend requests to this player"
            case .invitations: "match invitations"
            case .invitationsToOnePlayer: "match invitations to this player"
            case .reports: "scores and achievement reports"
            case .realtimeChannels: "realtime channels opened by this session"
            case .turnWrites: "turn-based moves"
            case .serverRequests: "requests with this server key"
            }
        }
    }

    /// Each limit, by name.
    public private(set) var limits: [Name: Limit]
    /// Realtime channels one session may have open at once (a further one is refused); 0 for no cap.
    public var realtimeChannelsOpenPerSession = 4

    /// The defaults: far above what a player does by hand or a game does in play, far below a flood.
    public init() {
        limits = [
            .signUps: Limit(count: 20, period: .seconds(3600)),
            .signIns: Limit(count: 60, period: .seconds(60)),
            .friendRequests: Limit(count: 30, period: .seconds(3600)),
            .friendRequestsToOnePlayer: Limit(count: 3, period: .seconds(86_400)),
            .invitations: Limit(count: 120, period: .seconds(3600)),
            .invitationsToOnePlayer: Limit(count: 12, period: .seconds(3600)),
            .reports: Limit(count: 600, period: .seconds(60)),
            .realtimeChannels: Limit(count: 30, period: .seconds(60)),
            .turnWrites: Limit(count: 300, period: .seconds(60)),
            .serverRequests: Limit(count: 6000, period: .seconds(60)),
        ]
    }

    /// Every limit off (benchmarks that drive one player at full speed).
    public static var none: RateLimits {
        var limits = RateLimits()
        for name in Name.allCases { limits[name] = .off }
        limits.realtimeChannelsOpenPerSession = 0
        return limits
    }

    /// The limit of this name.
    public subscript(name: Name) -> Limit {
        get { limits[name] ?? .off }
        set { limits[name] = newValue }
    }

    /// Sets one limit from `NAME=COUNT/SECONDS` (as `--rate-limit` takes it), or says what is wrong.
    public mutating func set(_ text: String) throws(RateLimitSettingError) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let name = Name(rawValue: parts[0]) else {
            throw RateLimitSettingError(
                "'\(text)' is not NAME=COUNT/SECONDS; the names are: \(Name.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let numbers = parts[1].split(separator: "/", maxSplits: 1)
        guard numbers.count == 2, let count = Int(numbers[0]), count >= 0, let seconds = Int(numbers[1]), seconds > 0 else {
            throw RateLimitSettingError("'\(text)': COUNT is a whole number from 0 (off), SECONDS a whole number from 1")
        }
        self[name] = Limit(count: count, period: .seconds(seconds))
    }
}

/// A `--rate-limit` value that could not be read.
public struct RateLimitSettingError: Error, CustomStringConvertible {
    /// What is wrong and what is allowed.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension APIError {
    /// An action over its rate limit.
    static func rateLimited(_ name: RateLimits.Name, limit: RateLimits.Limit, retryAfterSeconds: Int) -> APIError {
        APIError(
            .requestRateLimited, "too many \(name.counted): at most \(limit); try again in \(retryAfterSeconds) s",
            retryAfterSeconds: retryAfterSeconds)
    }

    /// A session with as many realtime channels open as allowed.
    static func tooManyRealtimeChannels(_ allowed: Int) -> APIError {
        APIError(.requestRateLimited, "a session may have \(allowed) realtime channels open at once; close one first", retryAfterSeconds: 1)
    }
}
