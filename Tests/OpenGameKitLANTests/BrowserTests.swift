import Testing
@testable import OpenGameKitLAN

@Suite("Browser")
struct BrowserTests {
    static let type = try! ServiceType(sessionID: "ogk")
    static let instance = DNSName(labels: ["Bob", "_ogk", "_tcp", "local"])
    static let host: DNSName = "bobhost.local."
    let t0 = ContinuousClock.now

    static func ptr(ttl: UInt32 = 4500) -> DNSResourceRecord { DNSResourceRecord(name: type.domainName, data: .ptr(instance), ttl: ttl) }
    static func srv(port: UInt16 = 5000, ttl: UInt32 = 120) -> DNSResourceRecord {
        DNSResourceRecord(name: instance, data: .srv(priority: 0, weight: 0, port: port, target: host), ttl: ttl, cacheFlush: true)
    }
    static func txt(peer: String = "B", ttl: UInt32 = 4500) -> DNSResourceRecord {
        DNSResourceRecord(name: instance, data: .txt(TXTRecord(["peer": peer, "v": "1"])), ttl: ttl, cacheFlush: true)
    }
    static func a(_ last: UInt8 = 7, ttl: UInt32 = 120, flush: Bool = true) -> DNSResourceRecord {
        DNSResourceRecord(name: host, data: .a(IPv4Address(10, 0, 0, last)), ttl: ttl, cacheFlush: flush)
    }
    static var fullResponse: DNSMessage { .response(answers: [ptr()], additionals: [srv(), txt(), a()]) }

    func sends(_ actions: [BrowserAction]) -> [(DNSMessage, ContinuousClock.Instant)] {
        actions.compactMap { if case .send(let m, let at) = $0 { (m, at) } else { nil } }
    }
    func events(_ actions: [BrowserAction]) -> [BrowserEvent] {
        actions.compactMap { if case .event(let e) = $0 { e } else { nil } }
    }

    @Test func queryBackoffDoublesUpToOneHour() throws {
        var browser = Browser(serviceType: Self.type)
        let first = sends(browser.start(now: t0))
        #expect(first.count == 1)
        #expect(first[0].0.questions == [DNSQuestion(name: Self.type.domainName, type: .ptr)])
        var times = [t0]
        var now = t0
        for _ in 0..<16 {
            now = try #require(browser.nextDeadline)
            let out = sends(browser.tick(now: now))
            #expect(out.count == 1)
            times.append(now)
        }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(Array(gaps.prefix(6)) == [1, 2, 4, 8, 16, 32].map { Duration.seconds($0) })
        #expect(gaps.max() == .seconds(3600))
        #expect(gaps.suffix(3).allSatisfy { $0 == .seconds(3600) })
    }

    @Test func foundWhenFullyResolvedInOnePacket() {
        var browser = Browser(serviceType: Self.type)
        _ = browser.start(now: t0)
        let found = events(browser.receive(Self.fullResponse, now: t0))
        let expected = DiscoveredService(
            instance: Self.instance, host: Self.host, port: 5000, txt: ["peer": "B", "v": "1"], addresses: [.v4(IPv4Address(10, 0, 0, 7))])
        #expect(found == [.found(expected)])
        #expect(expected.name == "Bob" && expected.peerID == "B")
        // The same packet again changes nothing.
        #expect(events(browser.receive(Self.fullResponse, now: t0 + .seconds(1))).isEmpty)
    }

    @Test func resolvesPiecewiseWithResolveQueries() throws {
        var browser = Browser(serviceType: Self.type)
        _ = browser.start(now: t0)
        #expect(events(browser.receive(.response(answers: [Self.ptr()]), now: t0)).isEmpty)
        let at = try #require(browser.nextDeadline)
        #expect(at == t0 + .milliseconds(100))
        let query = try #require(sends(browser.tick(now: at)).first?.0)
        #expect(Set(query.questions) == [DNSQuestion(name: Self.instance, type: .srv), DNSQuestion(name: Self.instance, type: .txt)])
        _ = browser.receive(.response(answers: [Self.srv(), Self.txt()]), now: at)
        // The next resolve query (1 s later) asks for the SRV target's addresses (the browse query
        // due at t0 + 1 s goes out separately).
        var next = at
        var hostQuery: DNSMessage?
        while hostQuery == nil, let deadline = browser.nextDeadline, deadline <= at + .seconds(1) {
            next = deadline
            hostQuery = sends(browser.tick(now: next)).map(\.0).first { $0.questions.contains(DNSQuestion(name: Self.host, type: .a)) }
        }
        #expect(next == at + .seconds(1))
        #expect(Set(try #require(hostQuery).questions) == [DNSQuestion(name: Self.host, type: .a), DNSQuestion(name: Self.host, type: .aaaa)])
        let found = events(browser.receive(.response(answers: [Self.a()]), now: next))
        #expect(found.count == 1)
        if case .found(let service) = found.first { #expect(service.port == 5000) } else { Issue.record("expected found") }
    }

    @Test func knownAnswersInBrowseQuery() throws {
        var browser = Browser(serviceType: Self.type)
        _ = browser.start(now: t0)
        _ = browser.receive(Self.fullResponse, now: t0)
        let now = t0 + .seconds(1)
        let query = try #require(sends(browser.tick(now: now)).first?.0)
        #expect(query.questions.contains(DNSQuestion(name: Self.type.domainName, type: .ptr)))
        #expect(query.answers.count == 1)
        #expect(query.answers.first?.data == .ptr(Self.instance))
        #expect(query.answers.first?.ttl == 4499)
    }

    @Test func lostOnTTLExpiry() throws {
        var browser = Browser(serviceType: Self.type)
        _ = browser.start(now: t0)
        _ = browser.receive(Self.fullResponse, now: t0)
        // SRV and A have TTL 120 s and nobody answers the refresh queries.
        var now = t0
        var lost: [BrowserEvent] = []
        var refreshQueries = 0
        while lost.isEmpty, let deadline = browser.nextDeadline {
            now = deadline
            let actions = browser.tick(now: now)
            lost += events(actions)
            refreshQueries += sends(actions).filter { $0.0.questions.contains(DNSQuestion(name: Self.instance, type: .srv)) }.count
        }
        #expect(lost == [.lost(instance: Self.instance)])
        #expect(now == t0 + .seconds(120))
        #expect(refreshQueries == 4, "refresh at 80, 85, 90 and 95 % of the TTL")
        #expect(browser.cache.lookup(Self.instance, .srv).isEmpty)
        #expect(browser.found.isEmpty)
    }

    @Test func refreshedRecordsDoNotExpire() {
        var browser = Browser(serviceType: Self.type)
        _ = browser.start(now: t0)
        _ = browser.receive(Self.fullResponse, now: t0)
        let later = t0 + .seconds(100)
        _ = browser.tick(now: later)
        _ = browser.receive(.response(answers: [Self.srv(), Self.a()]), now: later)
        #expect(events(browser.tick(now: t0 + .seconds(150))).isEmpty)
        #expect(browser.found.count == 1)
    }

    @Test func goodbyeRemovesAfterOneSecond() throws {
        var browser = Browser(serviceType: Self.type)
        _ = browser.start(now: t0)
        _ = browser.receive(Self.fullResponse, now: t0)
        let bye = t0 + .seconds(5)
        #expect(events(browser.receive(.response(answers: [Self.ptr(ttl: 0)]), now: bye)).isEmpty)
        #expect(try #require(browser.nextDeadline) <= bye + .seconds(1))
        #expect(events(browser.tick(now: bye + .milliseconds(999))).isEmpty)
        #expect(events(browser.tick(now: bye + .seconds(1))) == [.lost(instance: Self.instance)])
        // A goodbye for a record we never had is ignored.
        #expect(
            events(browser.receive(.response(answers: [DNSResourceRecord(name: Self.type.domainName, data: .ptr("X._ogk._tcp.local."), ttl: 0)]), now: bye))
                .isEmpty)
        #expect(browser.cache.lookup(Self.type.domainName, .ptr).isEmpty)
    }

    @Test func cacheFlushReplacesOlderRecords() throws {
        var browser = Browser(serviceType: Self.type)
        _ = browser.start(now: t0)
        _ = browser.receive(Self.fullResponse, now: t0)
        // Two seconds later the host announces a new address and port with the cache-flush bit.
        let later = t0 + .seconds(2)
        let changed = events(browser.receive(.response(answers: [Self.srv(port: 6000), Self.a(9)]), now: later))
        let expected = DiscoveredService(
            instance: Self.instance, host: Self.host, port: 6000, txt: ["peer": "B", "v": "1"], addresses: [.v4(IPv4Address(10, 0, 0, 9))])
        #expect(changed == [.updated(expected)])
        // The flushed records linger hidden for one second, then are gone.
        #expect(browser.cache.entries.count == 6)
        _ = browser.tick(now: later + .seconds(1))
        #expect(browser.cache.entries.count == 4)
        #expect(browser.cache.lookup(Self.host, .a).map(\.record.data) == [.a(IPv4Address(10, 0, 0, 9))])
    }

    @Test func cacheFlushKeepsRecordsFromTheSameBurst() {
        var browser = Browser(serviceType: Self.type)
        _ = browser.start(now: t0)
        _ = browser.receive(Self.fullResponse, now: t0)
        // A second address arriving within one second (a multi-packet announcement) does not flush the first.
        let found = events(browser.receive(.response(answers: [Self.a(8)]), now: t0 + .milliseconds(500)))
        if case .updated(let service) = found.first {
            #expect(service.addresses == [.v4(IPv4Address(10, 0, 0, 7)), .v4(IPv4Address(10, 0, 0, 8))])
        } else {
            Issue.record("expected an update, got \(found)")
        }
    }

    @Test func ignoresQueriesAndOtherTypes() {
        var browser = Browser(serviceType: Self.type)
        _ = browser.start(now: t0)
        var query = Self.fullResponse
        query.isResponse = false
        #expect(browser.receive(query, now: t0).isEmpty)
        #expect(browser.cache.entries.isEmpty)
        let other = DNSResourceRecord(name: "_other._tcp.local.", data: .ptr("Z._other._tcp.local."), ttl: 4500)
        _ = browser.receive(.response(answers: [other]), now: t0)
        #expect(browser.cache.entries.isEmpty)
    }

    @Test func cacheCapacityEvictsSoonestExpiring() {
        var cache = RecordCache(capacity: 3)
        for index in 0..<5 {
            cache.insert(DNSResourceRecord(name: "h.local.", data: .a(IPv4Address(1, 1, 1, UInt8(index))), ttl: UInt32(100 + index)), now: t0)
        }
        #expect(cache.entries.count == 3)
        #expect(cache.entries.map(\.record.ttl) == [102, 103, 104])
    }
}
