/// An mDNS record cache with the RFC 6762 expiry rules, as a pure value type.
///
/// - A record expires `ttl` seconds after it was last received.
/// - A record received with TTL 0 is a goodbye: it is kept for one more second, then removed (§10.1).
/// - A record received with the cache-flush bit marks every cached record with the same name, type and
///   class but different data that was received more than one second earlier as flushed: it is hidden
///   from lookups at once and removed one second later (§10.2). Records received within the last second
///   are kept, since they belong to the same burst of packets.
/// - When the cache holds more than `capacity` records, those closest to expiry are evicted first.
public struct RecordCache: Sendable {
    /// One cached record with its bookkeeping.
    public struct Entry: Hashable, Sendable {
        /// The record as last received (its `ttl` is the original TTL).
        public var record: DNSResourceRecord
        /// When the record was last received.
        public var receivedAt: ContinuousClock.Instant
        /// When the record will be removed.
        public var expiresAt: ContinuousClock.Instant
        /// Whether a newer cache-flush record replaced this one.
        public var flushed: Bool
        /// How many of the 80/85/90/95 % refresh queries were already due (RFC 6762 §5.2).
        public var refreshesDue: Int

        /// The time of refresh query `step` (0…3 → 80, 85, 90, 95 % of the TTL).
        func refreshTime(step: Int) -> ContinuousClock.Instant {
            receivedAt + .milliseconds(Int64(record.ttl) * Int64(800 + 50 * step))
        }
    }

    /// The maximum number of records kept.
    public let capacity: Int
    /// All cached entries, in insertion order.
    public private(set) var entries: [Entry] = []

    /// Creates an empty cache holding at most `capacity` records.
    public init(capacity: Int = 512) {
        self.capacity = max(1, capacity)
    }

    /// Adds or refreshes `record` received at `now`, applying the goodbye and cache-flush rules.
    public mutating func insert(_ record: DNSResourceRecord, now: ContinuousClock.Instant) {
        if record.cacheFlush {
            for index in entries.indices
            where entries[index].record.name == record.name
                && entries[index].record.type == record.type
                && entries[index].record.recordClass == record.recordClass
                && entries[index].record.data != record.data
                && now - entries[index].receivedAt > .seconds(1)
            {
                entries[index].flushed = true
                entries[index].expiresAt = min(entries[index].expiresAt, now + .seconds(1))
            }
        }
        var stored = record
        stored.cacheFlush = false
        if let index = entries.firstIndex(where: { $0.record.isSameRecord(as: record) }) {
            if record.ttl == 0 {
                entries[index].expiresAt = min(entries[index].expiresAt, now + .seconds(1))
            } else {
                entries[index] = Entry(record: stored, receivedAt: now, expiresAt: now + .seconds(Int64(record.ttl)), flushed: false, refreshesDue: 0)
            }
            return
        }
        guard record.ttl > 0 else { return }
        entries.append(Entry(record: stored, receivedAt: now, expiresAt: now + .seconds(Int64(record.ttl)), flushed: false, refreshesDue: 0))
        if entries.count > capacity, let victim = entries.indices.min(by: { entries[$0].expiresAt < entries[$1].expiresAt }) {
            entries.remove(at: victim)
        }
    }

    /// Removes the records whose time has come and returns them.
    @discardableResult
    public mutating func expire(now: ContinuousClock.Instant) -> [DNSResourceRecord] {
        let expired = entries.filter { $0.expiresAt <= now }.map(\.record)
        entries.removeAll { $0.expiresAt <= now }
        return expired
    }

    /// The live (not flushed) entries with `name` and `type`, newest first.
    public func lookup(_ name: DNSName, _ type: DNSRecordType) -> [Entry] {
        entries.filter { !$0.flushed && $0.record.type == type && $0.record.name == name }
            .sorted { $0.receivedAt > $1.receivedAt }
    }

    /// The live records with `name` and `type` whose remaining TTL is more than half the original, with the
    /// TTL rewritten to the remaining seconds: the known-answer list for a query (RFC 6762 §7.1).
    public func knownAnswers(_ name: DNSName, _ type: DNSRecordType, now: ContinuousClock.Instant) -> [DNSResourceRecord] {
        lookup(name, type).compactMap { entry in
            let remaining = entry.expiresAt - now
            guard remaining * 2 > .seconds(Int64(entry.record.ttl)) else { return nil }
            var record = entry.record
            record.ttl = UInt32(clamping: remaining.components.seconds)
            return record
        }
    }

    /// The earliest time at which an entry expires.
    public var nextExpiry: ContinuousClock.Instant? {
        entries.map(\.expiresAt).min()
    }

    /// Collects entries matching `isWanted` whose next refresh time has passed, marking that step done.
    mutating func dueRefreshes(now: ContinuousClock.Instant, isWanted: (DNSResourceRecord) -> Bool) -> [DNSResourceRecord] {
        var due: [DNSResourceRecord] = []
        for index in entries.indices where !entries[index].flushed && entries[index].refreshesDue < 4 && isWanted(entries[index].record) {
            var stepped = false
            while entries[index].refreshesDue < 4, entries[index].refreshTime(step: entries[index].refreshesDue) <= now {
                entries[index].refreshesDue += 1
                stepped = true
            }
            if stepped { due.append(entries[index].record) }
        }
        return due
    }

    /// The next refresh time among entries matching `isWanted`.
    func nextRefresh(isWanted: (DNSResourceRecord) -> Bool) -> ContinuousClock.Instant? {
        entries.filter { !$0.flushed && $0.refreshesDue < 4 && isWanted($0.record) }
            .map { $0.refreshTime(step: $0.refreshesDue) }.min()
    }
}
