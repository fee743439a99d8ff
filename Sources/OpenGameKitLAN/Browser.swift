/// The mDNS/DNS-SD browser state machine for one service type (RFC 6762, RFC 6763).
///
/// It owns no socket and no clock: call ``start(now:)``, ``receive(_:now:)`` for every received message,
/// and ``tick(now:)`` at or after ``nextDeadline``; carry out the returned actions.
///
/// - **Querying** (RFC 6762 §5.2): a PTR query for the service type at start, then after 1 s, 2 s, 4 s, …,
///   the interval doubling up to one hour. Each query lists the PTR records already known with more than
///   half their TTL left as known answers (§7.1).
/// - **Resolving**: an instance is found once its PTR, SRV and TXT records and at least one A/AAAA record
///   of the SRV target are cached. For instances missing some of those, SRV/TXT/A queries go out 100 ms
///   after the PTR appears, then after 1 s, 2 s, … up to 60 s.
/// - **Cache maintenance**: see ``RecordCache`` (TTL expiry, one-second goodbye grace, cache-flush).
///   Records in use are refreshed with queries at 80, 85, 90 and 95 % of their TTL (§5.2).
/// - **Events**: `.found` when an instance becomes resolved, `.updated` when its data changes, `.lost`
///   when it stops being resolvable (its PTR, SRV, TXT or last address expired, said goodbye or was flushed).
public struct Browser: Sendable {
    /// The longest interval between two browse queries (RFC 6762 §5.2).
    public static let maxQueryInterval: Duration = .seconds(3600)
    /// The longest interval between two resolve queries for one instance.
    public static let maxResolveInterval: Duration = .seconds(60)

    private struct ResolveSchedule: Sendable {
        var at: ContinuousClock.Instant
        var interval: Duration
    }

    /// The service type being browsed.
    public let serviceType: ServiceType
    /// The record cache.
    public private(set) var cache: RecordCache
    /// The instances currently found, by instance name.
    public private(set) var found: [DNSName: DiscoveredService] = [:]

    private var started = false
    private var nextQueryAt: ContinuousClock.Instant?
    private var queryInterval: Duration = .seconds(1)
    private var resolveSchedules: [DNSName: ResolveSchedule] = [:]

    /// Creates a browser; `cacheCapacity` bounds the number of cached records.
    public init(serviceType: ServiceType, cacheCapacity: Int = 512) {
        self.serviceType = serviceType
        self.cache = RecordCache(capacity: cacheCapacity)
    }

    /// When ``tick(now:)`` should next be called, or `nil` if no timer is needed.
    public var nextDeadline: ContinuousClock.Instant? {
        guard started else { return nil }
        let wanted = wantedRecords()
        return ([nextQueryAt, cache.nextExpiry, cache.nextRefresh(isWanted: wanted)] + resolveSchedules.values.map(\.at))
            .compactMap { $0 }.min()
    }

    /// Starts browsing: sends the first query now.
    public mutating func start(now: ContinuousClock.Instant) -> [BrowserAction] {
        guard !started else { return [] }
        started = true
        nextQueryAt = now
        return tick(now: now)
    }

    /// Stops browsing; the browser sends nothing more until started again.
    public mutating func stop() {
        started = false
        nextQueryAt = nil
        resolveSchedules = [:]
    }

    /// Advances timers: expires records, sends due browse, resolve and refresh queries, and reports changes.
    public mutating func tick(now: ContinuousClock.Instant) -> [BrowserAction] {
        guard started else { return [] }
        cache.expire(now: now)
        var questions: [DNSQuestion] = []
        var knownAnswers: [DNSResourceRecord] = []
        let typeName = serviceType.domainName

        if let at = nextQueryAt, at <= now {
            questions.append(DNSQuestion(name: typeName, type: .ptr))
            knownAnswers += cache.knownAnswers(typeName, .ptr, now: now)
            nextQueryAt = now + queryInterval
            queryInterval = min(queryInterval * 2, Self.maxQueryInterval)
        }

        var events = updateFound()
        scheduleResolves(now: now)
        for (instance, schedule) in resolveSchedules where schedule.at <= now {
            let srv = cache.lookup(instance, .srv).first
            if srv == nil { questions.append(DNSQuestion(name: instance, type: .srv)) }
            if cache.lookup(instance, .txt).isEmpty { questions.append(DNSQuestion(name: instance, type: .txt)) }
            if let srv, case .srv(_, _, _, let target) = srv.record.data {
                questions.append(DNSQuestion(name: target, type: .a))
                questions.append(DNSQuestion(name: target, type: .aaaa))
            }
            resolveSchedules[instance] = ResolveSchedule(at: now + schedule.interval, interval: min(schedule.interval * 2, Self.maxResolveInterval))
        }

        let wanted = wantedRecords()
        for record in cache.dueRefreshes(now: now, isWanted: wanted) {
            questions.append(DNSQuestion(name: record.name, type: record.type))
        }

        var unique: [DNSQuestion] = []
        for question in questions where !unique.contains(question) { unique.append(question) }
        var actions: [BrowserAction] = []
        if !unique.isEmpty {
            actions.append(.send(.query(unique, knownAnswers: knownAnswers), at: now))
        }
        events += updateFound()
        return actions + events.map(BrowserAction.event)
    }

    /// Handles a received message: caches relevant records from responses and reports changes.
    public mutating func receive(_ message: DNSMessage, now: ContinuousClock.Instant) -> [BrowserAction] {
        guard started, message.isResponse, message.opcode == 0, message.responseCode == 0 else { return [] }
        for record in message.answers + message.additionals where isRelevant(record) {
            cache.insert(record, now: now)
        }
        let events = updateFound()
        scheduleResolves(now: now)
        return events.map(BrowserAction.event)
    }

    // MARK: Internals

    private func isRelevant(_ record: DNSResourceRecord) -> Bool {
        guard record.recordClass == DNSResourceRecord.classIN else { return false }
        let typeName = serviceType.domainName
        switch record.type {
        case .ptr: return record.name == typeName
        case .srv, .txt: return record.name.labels.count == typeName.labels.count + 1 && record.name.parent == typeName
        case .a, .aaaa: return true
        default: return false
        }
    }

    /// Instance names currently listed by live PTR records.
    private func instances() -> [DNSName] {
        let typeName = serviceType.domainName
        return cache.lookup(typeName, .ptr).compactMap { entry in
            if case .ptr(let instance) = entry.record.data, instance.labels.count == typeName.labels.count + 1, instance.parent == typeName {
                return instance
            }
            return nil
        }
    }

    private func resolve(_ instance: DNSName) -> DiscoveredService? {
        guard let srv = cache.lookup(instance, .srv).first, case .srv(_, _, let port, let target) = srv.record.data,
            let txt = cache.lookup(instance, .txt).first, case .txt(let txtRecord) = txt.record.data
        else { return nil }
        var addresses: [IPAddress] = []
        for entry in cache.lookup(target, .a) { if case .a(let address) = entry.record.data { addresses.append(.v4(address)) } }
        for entry in cache.lookup(target, .aaaa) { if case .aaaa(let address) = entry.record.data { addresses.append(.v6(address)) } }
        guard !addresses.isEmpty else { return nil }
        return DiscoveredService(instance: instance, host: target, port: port, txt: txtRecord.dictionary, addresses: Array(Set(addresses)).sorted())
    }

    private mutating func updateFound() -> [BrowserEvent] {
        var current: [DNSName: DiscoveredService] = [:]
        for instance in instances() {
            if let service = resolve(instance) { current[instance] = service }
        }
        var events: [BrowserEvent] = []
        for (instance, service) in current.sorted(by: { $0.key.description < $1.key.description }) {
            if let previous = found[instance] {
                if previous != service { events.append(.updated(service)) }
            } else {
                events.append(.found(service))
            }
        }
        for instance in found.keys.sorted(by: { $0.description < $1.description }) where current[instance] == nil {
            events.append(.lost(instance: instance))
        }
        found = current
        return events
    }

    private mutating func scheduleResolves(now: ContinuousClock.Instant) {
        let unresolved = Set(instances().filter { found[$0] == nil })
        resolveSchedules = resolveSchedules.filter { unresolved.contains($0.key) }
        for instance in unresolved where resolveSchedules[instance] == nil {
            resolveSchedules[instance] = ResolveSchedule(at: now + .milliseconds(100), interval: .seconds(1))
        }
    }

    /// Which cached records are in use and worth refreshing before they expire.
    private func wantedRecords() -> @Sendable (DNSResourceRecord) -> Bool {
        let typeName = serviceType.domainName
        let instanceSet = Set(instances())
        var hosts = Set<DNSName>()
        for instance in instanceSet {
            for entry in cache.lookup(instance, .srv) {
                if case .srv(_, _, _, let target) = entry.record.data { hosts.insert(target) }
            }
        }
        let hostSet = hosts
        return { record in
            switch record.type {
            case .ptr: record.name == typeName
            case .srv, .txt: instanceSet.contains(record.name)
            case .a, .aaaa: hostSet.contains(record.name)
            default: false
            }
        }
    }
}
