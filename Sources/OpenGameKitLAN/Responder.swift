/// The mDNS responder state machine for one DNS-SD service instance (RFC 6762, RFC 6763).
///
/// It owns no socket and no clock: feed it ``start(now:)``, ``receive(_:sourcePort:now:)``,
/// ``tick(now:)`` at or after ``nextDeadline``, and ``stop(now:)``; carry out the returned actions.
///
/// Lifecycle:
/// - **Probing** (RFC 6762 §8.1): after a random 0–250 ms delay, three queries 250 ms apart asking for
///   the instance and host names, with the proposed records in the authority section. A response that
///   holds a different record for one of those names is a conflict: the instance is renamed
///   `<displayName> (2)`, `(3)`, … (or the host `<label>-2`, …) and probing restarts. A simultaneous probe
///   from another host is settled by the §8.2 tie-break; the loser waits one second and probes again.
///   After 15 conflicts within ten seconds, each new probe sequence waits five seconds.
/// - **Announcing** (§8.3): two unsolicited responses with all records, one second apart.
/// - **Answering** (§6): queries for the service type get the PTR with SRV, TXT and A records as
///   additionals (RFC 6763 §12); queries for the instance get SRV/TXT, for the host get A; a query for a
///   type we do not have for one of our unique names gets an NSEC. Answers listed in the query's
///   known-answer section with at least half our TTL are suppressed (§7.1). Answers containing the shared
///   PTR are delayed 20–120 ms. Queries from a source port other than 5353 get a legacy unicast reply (§6.7).
///   Questions with the QU bit are still answered by multicast, which §5.4 allows and which reaches every
///   process on a host that shares port 5353.
/// - **Goodbye** (§10.1): ``stop(now:)`` re-sends all announced records with TTL 0.
///
/// TTLs follow RFC 6762 §10: 120 s for SRV and address records, 4500 s for PTR and TXT.
public struct Responder: Sendable {
    /// TTL for records that name hosts: SRV and A (RFC 6762 §10).
    public static let hostRecordTTL: UInt32 = 120
    /// TTL for other records: PTR and TXT (RFC 6762 §10).
    public static let otherRecordTTL: UInt32 = 4500
    /// The DNS-SD service-type enumeration name (RFC 6763 §9).
    public static let serviceEnumerationName: DNSName = "_services._dns-sd._udp.local."

    /// Where the responder is in its lifecycle.
    public enum State: Hashable, Sendable {
        /// Created, not started.
        case idle
        /// Probing; `sent` probes of three have gone out.
        case probing(sent: Int)
        /// Probing done; `sent` announcements of two have gone out.
        case announcing(sent: Int)
        /// Announced and answering queries.
        case running
        /// Goodbye sent; inert.
        case stopped
    }

    /// The current lifecycle state.
    public private(set) var state: State = .idle
    /// The registration being advertised.
    public let registration: ServiceRegistration
    /// The instance name currently claimed, `<displayName>._<id>._tcp.local.`.
    public private(set) var instanceName: DNSName
    /// The host name currently claimed, `<hostLabel>.local.`.
    public private(set) var hostName: DNSName
    /// When ``tick(now:)`` should next be called, or `nil` if no timer is needed.
    public private(set) var nextDeadline: ContinuousClock.Instant?

    private var random: RandomSource
    private let hostBase: String
    private var instanceNumber = 1
    private var hostNumber = 1
    private var recentConflicts: [ContinuousClock.Instant] = []

    /// Creates a responder; `randomSource` supplies the probe delays, response jitter and the default host label.
    public init(registration: ServiceRegistration, randomSource: some RandomNumberGenerator & Sendable) {
        self.registration = registration
        var random = RandomSource(randomSource)
        let hostBase =
            registration.hostLabel.map { Self.truncated($0, toBytes: 58) }
            ?? {
                let hex = String(UInt32.random(in: .min ... .max, using: &random), radix: 16)
                return "ogk-" + String(repeating: "0", count: 8 - hex.count) + hex
            }()
        self.random = random
        self.hostBase = hostBase
        self.hostName = DNSName.local.prepending(hostBase)
        self.instanceName = registration.serviceType.domainName.prepending(Self.instanceLabel(registration.displayName, number: 1))
    }

    // MARK: Records

    /// The PTR record `<service type> → <instance>` (shared).
    public var ptrRecord: DNSResourceRecord {
        DNSResourceRecord(name: registration.serviceType.domainName, data: .ptr(instanceName), ttl: Self.otherRecordTTL)
    }

    /// The SRV record `<instance> → 0 0 <port> <host>` (unique).
    public var srvRecord: DNSResourceRecord {
        DNSResourceRecord(
            name: instanceName, data: .srv(priority: 0, weight: 0, port: registration.port, target: hostName), ttl: Self.hostRecordTTL, cacheFlush: true)
    }

    /// The TXT record of the instance (unique).
    public var txtRecord: DNSResourceRecord {
        DNSResourceRecord(name: instanceName, data: .txt(registration.txtRecord), ttl: Self.otherRecordTTL, cacheFlush: true)
    }

    /// The A records of the host (unique).
    public var addressRecords: [DNSResourceRecord] {
        registration.ipv4Addresses.map { DNSResourceRecord(name: hostName, data: .a($0), ttl: Self.hostRecordTTL, cacheFlush: true) }
    }

    /// Every record this responder announces: PTR, SRV, TXT and the A records.
    public var records: [DNSResourceRecord] {
        [ptrRecord, srvRecord, txtRecord] + addressRecords
    }

    private var uniqueRecords: [DNSResourceRecord] { [srvRecord, txtRecord] + addressRecords }

    private var enumerationRecord: DNSResourceRecord {
        DNSResourceRecord(name: Self.serviceEnumerationName, data: .ptr(registration.serviceType.domainName), ttl: Self.otherRecordTTL)
    }

    // MARK: Inputs

    /// Begins probing after a random 0–250 ms delay. Returns no actions; call ``tick(now:)`` at ``nextDeadline``.
    public mutating func start(now: ContinuousClock.Instant) -> [ResponderAction] {
        guard state == .idle else { return [] }
        state = .probing(sent: 0)
        nextDeadline = now + random.milliseconds(0...250)
        return []
    }

    /// Advances timers: sends due probes and announcements.
    public mutating func tick(now: ContinuousClock.Instant) -> [ResponderAction] {
        guard let deadline = nextDeadline, deadline <= now else { return [] }
        switch state {
        case .probing(let sent) where sent < 3:
            state = .probing(sent: sent + 1)
            nextDeadline = now + .milliseconds(250)
            return [.send(probeMessage(unicastResponse: sent == 0), to: .multicast, at: now)]
        case .probing:
            state = .announcing(sent: 1)
            nextDeadline = now + .seconds(1)
            return [.event(.registered(instanceName: instanceName)), .send(announcement(ttl: nil), to: .multicast, at: now)]
        case .announcing:
            state = .running
            nextDeadline = nil
            return [.send(announcement(ttl: nil), to: .multicast, at: now)]
        case .idle, .running, .stopped:
            nextDeadline = nil
            return []
        }
    }

    /// Handles a received message. `sourcePort` is the sender's UDP port (5353 for fully compliant mDNS).
    public mutating func receive(_ message: DNSMessage, sourcePort: UInt16, now: ContinuousClock.Instant) -> [ResponderAction] {
        guard message.opcode == 0 else { return [] }
        switch state {
        case .idle, .stopped:
            return []
        case .probing:
            return message.isResponse ? handleResponseWhileProbing(message, now: now) : handleProbeTieBreak(message, now: now)
        case .announcing, .running:
            if message.isResponse {
                return handleResponseAfterProbing(message, now: now)
            }
            return answer(message, sourcePort: sourcePort, now: now)
        }
    }

    /// Stops advertising: sends a goodbye (all records with TTL 0) if anything had been announced.
    public mutating func stop(now: ContinuousClock.Instant) -> [ResponderAction] {
        let wasAnnounced: Bool
        switch state {
        case .announcing, .running: wasAnnounced = true
        default: wasAnnounced = false
        }
        guard state != .stopped else { return [] }
        state = .stopped
        nextDeadline = nil
        var actions: [ResponderAction] = []
        if wasAnnounced {
            actions.append(.send(announcement(ttl: 0), to: .multicast, at: now))
        }
        actions.append(.event(.stopped))
        return actions
    }

    // MARK: Probing

    private func probeMessage(unicastResponse: Bool) -> DNSMessage {
        var questions = [DNSQuestion(name: instanceName, type: .any, unicastResponse: unicastResponse)]
        if !registration.ipv4Addresses.isEmpty {
            questions.append(DNSQuestion(name: hostName, type: .any, unicastResponse: unicastResponse))
        }
        let authorities = uniqueRecords.map { record in
            var record = record
            record.cacheFlush = false
            return record
        }
        return .query(questions, authorities: authorities)
    }

    private func announcement(ttl: UInt32?) -> DNSMessage {
        .response(
            answers: records.map { record in
                var record = record
                if let ttl { record.ttl = ttl }
                return record
            })
    }

    /// Whether `record` claims one of our unique names with data we do not own.
    private func conflicts(_ record: DNSResourceRecord) -> Bool {
        guard record.name == instanceName || record.name == hostName, record.ttl > 0 else { return false }
        if case .nsec = record.data { return false }
        return !uniqueRecords.contains { $0.isSameRecord(as: record) }
    }

    private mutating func handleResponseWhileProbing(_ message: DNSMessage, now: ContinuousClock.Instant) -> [ResponderAction] {
        guard let conflicting = message.allRecords.first(where: conflicts) else { return [] }
        return rename(conflictingName: conflicting.name, now: now)
    }

    private mutating func rename(conflictingName: DNSName, now: ContinuousClock.Instant) -> [ResponderAction] {
        let old: DNSName
        let new: DNSName
        if conflictingName == instanceName {
            old = instanceName
            instanceNumber += 1
            instanceName = registration.serviceType.domainName.prepending(Self.instanceLabel(registration.displayName, number: instanceNumber))
            new = instanceName
        } else {
            old = hostName
            hostNumber += 1
            hostName = DNSName.local.prepending("\(hostBase)-\(hostNumber)")
            new = hostName
        }
        recentConflicts = recentConflicts.filter { now - $0 < .seconds(10) } + [now]
        state = .probing(sent: 0)
        nextDeadline = now + (recentConflicts.count >= 15 ? .seconds(5) : random.milliseconds(0...250))
        return [.event(.renamed(from: old, to: new))]
    }

    /// RFC 6762 §8.2: compare our proposed records with those in another host's simultaneous probe.
    private mutating func handleProbeTieBreak(_ message: DNSMessage, now: ContinuousClock.Instant) -> [ResponderAction] {
        for name in [instanceName, hostName] {
            let theirs = message.authorities.filter { $0.name == name }
            guard !theirs.isEmpty else { continue }
            let ours = uniqueRecords.filter { $0.name == name }
            guard let comparison = Self.compareForTieBreak(ours, theirs), comparison < 0 else { continue }
            // We lost: wait one second, then probe again with the same name.
            state = .probing(sent: 0)
            nextDeadline = now + .seconds(1)
            return []
        }
        return []
    }

    /// Lexicographic comparison of two record sets sorted by class, type and raw rdata; `nil` if unencodable.
    static func compareForTieBreak(_ ours: [DNSResourceRecord], _ theirs: [DNSResourceRecord]) -> Int? {
        func keys(_ records: [DNSResourceRecord]) -> [[UInt8]]? {
            var result: [[UInt8]] = []
            for record in records {
                guard let data = try? record.data.canonicalBytes() else { return nil }
                result.append(
                    [
                        UInt8(record.recordClass >> 8), UInt8(record.recordClass & 0xFF),
                        UInt8(record.type.rawValue >> 8), UInt8(record.type.rawValue & 0xFF),
                    ] + data)
            }
            return result.sorted { $0.lexicographicallyPrecedes($1) }
        }
        guard let a = keys(ours), let b = keys(theirs) else { return nil }
        for (x, y) in zip(a, b) where x != y {
            return x.lexicographicallyPrecedes(y) ? -1 : 1
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    private mutating func handleResponseAfterProbing(_ message: DNSMessage, now: ContinuousClock.Instant) -> [ResponderAction] {
        // RFC 6762 §9: a conflicting unique record for our names (same name and type, other data) → probe again.
        let conflict = message.allRecords.first { record in
            conflicts(record) && uniqueRecords.contains { $0.name == record.name && $0.type == record.type }
        }
        guard let conflict else { return [] }
        state = .probing(sent: 0)
        nextDeadline = now + random.milliseconds(0...250)
        return [.event(.conflictDetected(conflict.name))]
    }

    // MARK: Answering

    private mutating func answer(_ query: DNSMessage, sourcePort: UInt16, now: ContinuousClock.Instant) -> [ResponderAction] {
        let legacy = sourcePort != 5353
        var answers: [DNSResourceRecord] = []
        for question in query.questions where question.questionClass == DNSResourceRecord.classIN || question.questionClass == 255 {
            for record in answersFor(question) where !answers.contains(record) {
                answers.append(record)
            }
        }
        if !legacy {
            // Known-answer suppression (RFC 6762 §7.1).
            answers.removeAll { ours in
                query.answers.contains { $0.isSameRecord(as: ours) && $0.ttl >= ours.ttl / 2 }
            }
        }
        guard !answers.isEmpty else { return [] }
        var additionals: [DNSResourceRecord] = []
        for record in answers {
            for extra in additionalsFor(record) where !answers.contains(extra) && !additionals.contains(extra) {
                additionals.append(extra)
            }
        }
        if !legacy {
            additionals.removeAll { ours in
                query.answers.contains { $0.isSameRecord(as: ours) && $0.ttl >= ours.ttl / 2 }
            }
        }
        if legacy {
            func capped(_ record: DNSResourceRecord) -> DNSResourceRecord {
                var record = record
                record.ttl = min(record.ttl, 10)
                record.cacheFlush = false
                return record
            }
            var reply = DNSMessage.response(answers: answers.map(capped), additionals: additionals.map(capped))
            reply.id = query.id
            reply.questions = query.questions.map { question in
                var question = question
                question.unicastResponse = false
                return question
            }
            return [.send(reply, to: .replyToSender, at: now)]
        }
        let shared = answers.contains { !$0.cacheFlush }
        let at = shared ? now + random.milliseconds(20...120) : now
        return [.send(.response(answers: answers, additionals: additionals), to: .multicast, at: at)]
    }

    private func answersFor(_ question: DNSQuestion) -> [DNSResourceRecord] {
        if question.isAnswered(byName: Self.serviceEnumerationName, type: .ptr) {
            return [enumerationRecord]
        }
        let matching = records.filter { question.isAnswered(byName: $0.name, type: $0.type) }
        if matching.isEmpty, question.type != .any, let nsec = nsecRecord(for: question.name) {
            return [nsec]
        }
        return matching
    }

    private func additionalsFor(_ record: DNSResourceRecord) -> [DNSResourceRecord] {
        switch record.data {
        case .ptr(let target) where target == instanceName:
            return [srvRecord, txtRecord] + addressRecords + [nsecRecord(for: hostName)].compactMap { $0 }
        case .srv(_, _, _, let target) where target == hostName:
            return addressRecords + [nsecRecord(for: hostName)].compactMap { $0 }
        default:
            return []
        }
    }

    /// An NSEC record asserting which types exist for one of our unique names (RFC 6762 §6.1).
    private func nsecRecord(for name: DNSName) -> DNSResourceRecord? {
        let types = Set(uniqueRecords.filter { $0.name == name }.map(\.type)).sorted()
        guard !types.isEmpty else { return nil }
        let ttl = name == hostName ? Self.hostRecordTTL : Self.otherRecordTTL
        return DNSResourceRecord(name: name, data: .nsec(nextName: name, types: types), ttl: ttl, cacheFlush: true)
    }

    // MARK: Names

    /// `<displayName>` or `<displayName> (n)`, truncated on a character boundary to fit 63 bytes.
    static func instanceLabel(_ displayName: String, number: Int) -> String {
        let suffix = number > 1 ? " (\(number))" : ""
        let base = displayName.isEmpty ? "Game" : displayName
        return truncated(base, toBytes: DNSName.maxLabelLength - suffix.utf8.count) + suffix
    }

    static func truncated(_ string: String, toBytes limit: Int) -> String {
        var result = string
        while result.utf8.count > limit { result.removeLast() }
        return result
    }
}
