import Foundation
import GameCenterProtocol

/// A turn-based match's rules as one pure state machine: every change a participant or the server's clock makes is
/// ``apply(_:now:limits:)`` of a ``TurnCommand``, which checks the change against the stored state, makes it, bumps
/// ``version`` and says who must be told (``TurnNotice``). No I/O happens here; ``TurnBasedService`` reads the state,
/// applies one command and writes it back only if nobody wrote in between.
///
/// The invariant the property test holds it to: a match is never stuck. While it is open, its current seat can take
/// the turn (or waits for auto-match) and at least one player can still act; when no player can, the match ends;
/// and every player can leave (quit, or remove once done).
struct TurnMatchState: Codable, Equatable, Sendable {
    /// GameKit's match status (raw values shared with the SDK).
    enum Status: Int, Codable, Sendable {
        case open = 1
        case ended = 2
        case matching = 3
    }

    /// One seat and its participant.
    struct Seat: Codable, Equatable, Sendable {
        /// GameKit's participant status (raw values shared with the SDK).
        enum Status: Int, Codable, Sendable {
            case invited = 1
            case declined = 2
            case matching = 3
            case active = 4
            case done = 5
        }

        var playerID: String?
        var status: Status
        var outcome = 0
        var lastTurnAt: Int64?
        /// The player hid the match from their list.
        var removed = false
        /// When this seat last reminded others (reminders are rate-limited).
        var lastReminderAt: Int64?

        /// Whether the turn may pass to this seat: a player who can still play, an invitee, or a seat for auto-match.
        var canTakeTurn: Bool { status == .active || status == .invited || status == .matching }
        /// Whether a player here can still act in the match.
        var isPlaying: Bool { playerID != nil && (status == .active || status == .invited) }
    }

    /// An exchange outside the turn order.
    struct Exchange: Codable, Equatable, Sendable {
        /// GameKit's exchange status (raw values shared with the SDK).
        enum Status: Int, Codable, Sendable {
            case active = 1
            case complete = 2
            case canceled = 4
        }

        struct Reply: Codable, Equatable, Sendable {
            var recipient: Int
            var data: Data
            var message: String?
            var repliedAt: Int64
        }

        var id: String
        var sender: Int
        var recipients: [Int]
        var data: Data
        var message: String?
        var sentAt: Int64
        var timeoutAt: Int64?
        var completedAt: Int64?
        var status: Status
        var replies: [Reply] = []
    }

    var matchID: String
    var bundleID: String
    var createdAt: Int64
    /// Grows by one with every change; numbers the match's event log.
    var version: Int64 = 1
    var status: Status = .open
    var seats: [Seat]
    /// The seat whose turn it is (nil once ended).
    var current: Int?
    /// When the current seat's turn passes on (nil: no timeout, or the seat waits for auto-match).
    var turnDeadline: Int64?
    /// The rest of the order the last turn named, tried in turn when the current seat times out.
    var nextOrder: [Int] = []
    /// The timeout the last turn set, in milliseconds (0: none); a seat filled by auto-match gets it when it joins.
    var turnTimeoutMillis: Int64 = 0
    var message: String?
    var playerGroup: UInt32
    var inviteMessage: String?
    /// Invitations go out with the first turn that passes, as GameKit's do.
    var invitationsSent = false
    var exchanges: [Exchange] = []
    var nextExchangeNumber = 1
    var matchDataSize = 0

    /// A new match: the creator in seat 0 with the first turn, then the invitees, then seats for auto-match.
    init(
        matchID: String, bundleID: String, creator: String, seats count: Int, invitees: [String], playerGroup: UInt32,
        inviteMessage: String?, now: Int64
    ) {
        self.matchID = matchID
        self.bundleID = bundleID
        self.createdAt = now
        self.playerGroup = playerGroup
        self.inviteMessage = inviteMessage
        var seats = [Seat(playerID: creator, status: .active)]
        seats += invitees.map { Seat(playerID: $0, status: .invited) }
        while seats.count < count { seats.append(Seat(playerID: nil, status: .matching)) }
        self.seats = seats
        current = 0
    }

    /// The earliest moment the server's clock changes this match (a turn or an exchange timing out); nil for never.
    var deadline: Int64? {
        guard status != .ended else { return nil }
        let exchangeDeadlines = exchanges.filter { $0.status == .active }.compactMap(\.timeoutAt)
        return ([turnDeadline].compactMap { $0 } + exchangeDeadlines).min()
    }

    /// Seats open to auto-match.
    var openSeats: Int { status == .ended ? 0 : seats.count { $0.playerID == nil && $0.status == .matching } }

    /// Whether `playerID` sees the match (in their list, by id, in events): a participant who has not removed it, and
    /// an invitee only once the invitations went out.
    func isVisible(to playerID: String) -> Bool {
        seats.contains { $0.playerID == playerID && !$0.removed && ($0.status != .invited || invitationsSent) && $0.status != .declined }
    }

    /// Every player the match is kept for (not removed, not declined).
    var members: [String] {
        seats.compactMap { $0.removed || $0.status == .declined ? nil : $0.playerID }
    }

    /// Whether nobody keeps the match any longer: it ended (or every player left) and every player removed it.
    var isForgotten: Bool {
        seats.allSatisfy { $0.playerID == nil || $0.removed } && (status == .ended || !seats.contains { $0.isPlaying })
    }

    func seatIndex(of playerID: String) -> Int? {
        seats.firstIndex { $0.playerID == playerID }
    }
}

/// A change to a turn-based match.
enum TurnCommand: Sendable {
    /// Auto-match puts `player` in an open seat.
    case join(player: String)
    case endTurn(player: String, version: Int64, next: [Int], timeoutMillis: Int64, dataSize: Int, message: String?, outcomes: [Int])
    case saveTurn(player: String, version: Int64, dataSize: Int)
    case quitInTurn(player: String, version: Int64, outcome: Int, next: [Int], timeoutMillis: Int64, dataSize: Int, message: String?)
    case endMatch(player: String, version: Int64, dataSize: Int, outcomes: [Int], message: String?)
    case saveMerged(player: String, version: Int64, dataSize: Int, resolved: [String])
    case accept(player: String)
    case decline(player: String)
    case quitOutOfTurn(player: String, outcome: Int)
    case remove(player: String)
    case remind(player: String, recipients: [Int], message: String?)
    case sendExchange(player: String, recipients: [Int], data: Data, message: String?, timeoutMillis: Int64)
    case reply(player: String, exchangeID: String, data: Data, message: String?)
    case cancel(player: String, exchangeID: String, message: String?)
    /// The server's clock: turns and exchanges whose time ran out move on.
    case expire
    /// The studio's game server ends the match (as its arbiter) with an outcome for every seat still in play; the match
    /// data stays as the last turn left it.
    case arbitrate(version: Int64, outcomes: [Int], message: String?)

    /// Whether the command stores the match's data: a change even when nothing else in the match changes (a save of
    /// data the same size as before).
    var storesMatchData: Bool {
        switch self {
        case .endTurn, .saveTurn, .quitInTurn, .endMatch, .saveMerged: true
        default: false
        }
    }
}

/// Who must be told what after a change.
struct TurnNotice: Equatable, Sendable {
    var kind: TurnBasedEventInfo.Kind
    var recipients: [String]
    var actor: Int?
    var exchange: TurnMatchState.Exchange? = nil
    var message: String? = nil
}

extension TurnMatchState {
    /// GameKit's outcomes: none 0 … fourth 9, or a custom value in `0xFF0000`'s range.
    static func isValidOutcome(_ outcome: Int) -> Bool {
        (0...9).contains(outcome) || (0xFF_0000...0xFF_FFFF).contains(outcome)
    }

    static let outcomeTimeExpired = 5
    static let outcomeQuit = 1

    /// Applies `command` at `now`; throws (changing nothing) when the rules refuse it. Returns who must be told what;
    /// an empty list with an unchanged ``version`` means nothing happened (``TurnCommand/expire`` with nothing due). A
    /// command that stores match data always changes the match, so the data is written.
    mutating func apply(_ command: TurnCommand, now: Int64, limits: TurnBasedSettings) throws(APIError) -> [TurnNotice] {
        var next = self
        var notices = try next.applying(command, now: now, limits: limits)
        guard next != self || command.storesMatchData else { return [] }
        if next.status != .ended, !next.seats.contains(where: \.isPlaying) {
            // Nobody is left who could take a turn: the match ends rather than wait forever.
            next.finish()
            notices.append(TurnNotice(kind: .matchEnded, recipients: next.members, actor: nil))
        }
        next.version = version + 1
        self = next
        return notices
    }
}
