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
    /// Notices about `playerID`'s events and about `sessionID`, until the stream is dropped.
    func subscribe(playerID: String, sessionID: String) -> AsyncStream<BusNotice>
}

/// The single-node bus: subscribers in a dictionary, one bounded stream each.
public final class InProcessEventBus: EventBus {
    private struct Subscriber {
        let playerID: String
        let sessionID: String
        let continuation: AsyncStream<BusNotice>.Continuation
    }

    private let subscribers = Mutex<[Int: Subscriber]>([:])
    private let nextID = Atomic<Int>(0)

    /// Creates an empty bus.
    public init() {}

    public func publish(_ notice: BusNotice) {
        let targets = subscribers.withLock { subscribers in
            subscribers.values.filter { subscriber in
                switch notice {
                case .playerEvents(let playerID): subscriber.playerID == playerID
                case .sessionEnded(let sessionID, _): subscriber.sessionID == sessionID
                }
            }
        }
        for target in targets { target.continuation.yield(notice) }
    }

    /// Tells every subscriber that its player's events may have grown (after notices from other nodes could have been
    /// missed): each re-reads storage from its cursor, so nothing is lost.
    public func wakeEveryone() {
        let players = subscribers.withLock { Set($0.values.map(\.playerID)) }
        for player in players { publish(.playerEvents(playerID: player)) }
    }

    public func subscribe(playerID: String, sessionID: String) -> AsyncStream<BusNotice> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        // A subscriber that falls behind only needs to know that something changed: keep the newest few.
        let (stream, continuation) = AsyncStream.makeStream(of: BusNotice.self, bufferingPolicy: .bufferingNewest(16))
        subscribers.withLock { $0[id] = Subscriber(playerID: playerID, sessionID: sessionID, continuation: continuation) }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }
}
