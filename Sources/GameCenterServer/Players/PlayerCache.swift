import GameCenterStorage
import Synchronization

/// Recently read players (alias, status), friend lists and recently played games, so that loading players a device
/// asked about moments ago costs no database read (games load the same players every few seconds).
///
/// Changes made through this node drop the entries they touch before they answer (``playerChanged(_:)``,
/// ``friendshipChanged(_:_:)``), and a read that overlapped such a change is not kept. With several nodes on one
/// database, another node's change is seen here when the entry ages out: at most ``timeToLive``, as for
/// ``SessionCache``.
final class PlayerCache: Sendable {
    /// How long an entry is trusted, in milliseconds.
    static let timeToLive: Int64 = 5_000
    /// Entries kept at most per kind; past this the kind starts over.
    static let capacity = 100_000

    private struct Entry<Value> {
        let value: Value
        let readAt: Int64
    }

    private struct State {
        /// Counts changes: a read that began before a change is not stored.
        var generation: UInt64 = 0
        var players: [String: Entry<PlayerRecord>] = [:]
        var friends: [String: Entry<Set<String>>] = [:]
        var playedGames: [String: Entry<[PlayedGameRecord]>] = [:]
    }

    /// What a lookup found, and what it must read from storage.
    struct Lookup {
        /// Taken before the lookup: pass it back to ``store(_:readSince:now:)``.
        let generation: UInt64
        var players: [String: PlayerRecord]
        var missingPlayers: [String]
        /// The caller's friends, when cached.
        var friends: Set<String>?
    }

    /// What was read from storage after a ``Lookup``.
    struct Read {
        var players: [PlayerRecord] = []
        var friends: (playerID: String, friendIDs: Set<String>)?
        /// Every player asked for, with no games for those that have none.
        var playedGames: [String: [PlayedGameRecord]] = [:]
    }

    private let state = Mutex(State())

    /// The cached players among `ids` and, when cached, the friends of `viewer`.
    func lookup(_ ids: [String], viewer: String, now: Int64) -> Lookup {
        state.withLock { state in
            var lookup = Lookup(generation: state.generation, players: [:], missingPlayers: [], friends: nil)
            for id in ids {
                if let entry = state.players[id], now - entry.readAt < Self.timeToLive {
                    lookup.players[id] = entry.value
                } else {
                    lookup.missingPlayers.append(id)
                }
            }
            if let entry = state.friends[viewer], now - entry.readAt < Self.timeToLive { lookup.friends = entry.value }
            return lookup
        }
    }

    /// The cached recently played games of `ids`, and the ids to read.
    func playedGames(_ ids: [String], now: Int64) -> (found: [String: [PlayedGameRecord]], missing: [String]) {
        state.withLock { state in
            var found: [String: [PlayedGameRecord]] = [:]
            var missing: [String] = []
            for id in ids {
                if let entry = state.playedGames[id], now - entry.readAt < Self.timeToLive { found[id] = entry.value } else { missing.append(id) }
            }
            return (found, missing)
        }
    }

    /// Keeps what was read, unless something changed since `generation` was taken.
    func store(_ read: Read, readSince generation: UInt64, now: Int64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.players.count + read.players.count > Self.capacity { state.players.removeAll(keepingCapacity: true) }
            for player in read.players { state.players[player.playerID] = Entry(value: player, readAt: now) }
            if let (playerID, friendIDs) = read.friends {
                if state.friends.count >= Self.capacity { state.friends.removeAll(keepingCapacity: true) }
                state.friends[playerID] = Entry(value: friendIDs, readAt: now)
            }
            if state.playedGames.count + read.playedGames.count > Self.capacity { state.playedGames.removeAll(keepingCapacity: true) }
            for (playerID, games) in read.playedGames { state.playedGames[playerID] = Entry(value: games, readAt: now) }
        }
    }

    /// A player's alias, status or played games changed.
    func playerChanged(_ playerID: String) {
        state.withLock { state in
            state.generation &+= 1
            state.players[playerID] = nil
            state.playedGames[playerID] = nil
        }
    }

    /// Two players became friends or stopped being friends.
    func friendshipChanged(_ a: String, _ b: String) {
        state.withLock { state in
            state.generation &+= 1
            state.friends[a] = nil
            state.friends[b] = nil
        }
    }
}
