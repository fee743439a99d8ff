import GameCenterProtocol
import Synchronization

/// A notice that something durable changed; subscribers re-read storage, so a lost notice loses nothing.
public enum BusNotice: Sendable, Equatable {
    /// A player's event stream grew.
    case playerEvents(playerID: String)
    /// A session was signed out, revoked or expired.
    case sessionEnded(sessionID: String, reason: String)
}

/// Carries notices between the parts of a node (and, in a multi-node deployment, between nodes).
public protocol EventBus: Sendable {
    /// Delivers `notice` to current subscribers; never blocks.
    func publish(_ notice: BusNotice)
    /// Calls `deliver` with the notices about `playerID`'s events and about `sessionID` until the subscription is
    /// cancelled. `deliver` runs on the publisher's thread: it hands the notice on (to a stream) and never blocks.
    func subscribe(playerID: String, sessionID: String, deliver: @escaping @Sendable (BusNotice) -> Void) -> BusSubscription
    /// Tells the other nodes that this one stored score reports, so that their boards follow; never blocks.
    func scoresStored()
    /// Tells the other nodes that a studio erased a player's scores in a game, so that their boards drop them.
    func scoresRemoved(playerID: String, bundleID: String)
    /// Tells the other nodes that this one reloaded the games' manifests (the studio console), so that they reload
    /// theirs from their own manifest folder; never blocks.
    func manifestsReloaded()
}

/// One subscriber's place on a bus; ``cancel()`` leaves it (also when dropped).
public final class BusSubscription: Sendable {
    private let leave: Mutex<Callback<Void>?>

    /// A subscription that runs `leave` once, when cancelled or dropped.
    init(leave: @escaping @Sendable () -> Void) {
        self.leave = Mutex(Callback { _ in leave() })
    }

    /// Stops the notices; later calls do nothing.
    public func cancel() {
        leave.withLock { leave in
            defer { leave = nil }
            return leave
        }?.call(())
    }

    deinit { cancel() }
}

/// The single-node bus: subscribers indexed by player and by session, so a notice costs its own subscribers' time,
/// not every open channel's.
public final class InProcessEventBus: EventBus {
    private typealias Deliver = @Sendable (BusNotice) -> Void

    private struct Subscribers {
        var byPlayer: [String: [Int: Deliver]] = [:]
        var bySession: [String: [Int: Deliver]] = [:]
        var nextID = 0
    }

    private let subscribers = Mutex(Subscribers())

    /// Creates an empty bus.
    public init() {}

    public func publish(_ notice: BusNotice) {
        let targets = subscribers.withLock { subscribers in
            switch notice {
            case .playerEvents(let playerID): subscribers.byPlayer[playerID].map { Array($0.values) } ?? []
            case .sessionEnded(let sessionID, _): subscribers.bySession[sessionID].map { Array($0.values) } ?? []
            }
        }
        for deliver in targets { deliver(notice) }
    }

    /// Tells every subscriber that its player's events may have grown (after notices from other nodes could have been
    /// missed): each re-reads storage from its cursor, so nothing is lost.
    public func wakeEveryone() {
        let players = subscribers.withLock { Array($0.byPlayer.keys) }
        for player in players { publish(.playerEvents(playerID: player)) }
    }

    public func subscribe(playerID: String, sessionID: String, deliver: @escaping @Sendable (BusNotice) -> Void) -> BusSubscription {
        let id = subscribers.withLock { subscribers in
            subscribers.nextID += 1
            let id = subscribers.nextID
            subscribers.byPlayer[playerID, default: [:]][id] = deliver
            subscribers.bySession[sessionID, default: [:]][id] = deliver
            return id
        }
        return BusSubscription { [weak self] in
            self?.subscribers.withLock { subscribers in
                subscribers.byPlayer[playerID]?[id] = nil
                if subscribers.byPlayer[playerID]?.isEmpty == true { subscribers.byPlayer[playerID] = nil }
                subscribers.bySession[sessionID]?[id] = nil
                if subscribers.bySession[sessionID]?.isEmpty == true { subscribers.bySession[sessionID] = nil }
            }
        }
    }
    /// One node: its boards took the reports when it stored them.
    public func scoresStored() {}

    /// One node: its boards dropped the scores when it erased them.
    public func scoresRemoved(playerID: String, bundleID: String) {}

    /// One node: it reloaded its manifests itself.
    public func manifestsReloaded() {}
}
