import Testing
@testable import OpenGameKitLAN
import NetworkFaultProxy

@Suite("Responder")
struct ResponderTests {
    static let type = try! ServiceType(sessionID: "ogk")
    static let registration = ServiceRegistration(
        serviceType: type, displayName: "Alice's Game", port: 4242, peerID: "peer-A",
        ipv4Addresses: [IPv4Address(10, 0, 0, 5)], hostLabel: "alicehost"
    )
    let t0 = ContinuousClock.now

    func sends(_ actions: [ResponderAction]) -> [(DNSMessage, MDNSDestination, ContinuousClock.Instant)] {
        actions.compactMap { if case .send(let m, let d, let at) = $0 { (m, d, at) } else { nil } }
    }

    func events(_ actions: [ResponderAction]) -> [ResponderEvent] {
        actions.compactMap { if case .event(let e) = $0 { e } else { nil } }
    }

    /// Runs the responder through probing and announcing; returns the time after the second announcement.
    func register(_ responder: inout Responder) -> ContinuousClock.Instant {
        _ = responder.start(now: t0)
        var now = t0
        while responder.state != .running, let deadline = responder.nextDeadline {
            now = deadline
            _ = responder.tick(now: now)
        }
        return now
    }

    @Test func namesAndRecords() {
        let responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 1))
        #expect(responder.instanceName == DNSName(labels: ["Alice's Game", "_ogk", "_tcp", "local"]))
        #expect(responder.hostName == "alicehost.local.")
        #expect(responder.ptrRecord.ttl == 4500 && !responder.ptrRecord.cacheFlush)
        #expect(responder.srvRecord.ttl == 120 && responder.srvRecord.cacheFlush)
        #expect(responder.srvRecord.data == .srv(priority: 0, weight: 0, port: 4242, target: "alicehost.local."))
        #expect(responder.txtRecord.ttl == 4500)
        guard case .txt(let txt) = responder.txtRecord.data else { Issue.record("no TXT"); return }
        #expect(txt.dictionary == ["peer": "peer-A", "v": "1"])
        #expect(responder.addressRecords.map(\.ttl) == [120])
        let generated = Responder(
            registration: ServiceRegistration(serviceType: Self.type, displayName: String(repeating: "é", count: 40), port: 1, peerID: "p", ipv4Addresses: []),
            randomSource: SplitMix64(seed: 2))
        #expect(generated.hostName.labels[0].hasPrefix("ogk-") && generated.hostName.labels[0].count == 12)
        #expect(generated.instanceName.labels[0].utf8.count <= 63)
        #expect(Responder.instanceLabel(String(repeating: "x", count: 70), number: 12).utf8.count == 63)
        #expect(Responder.instanceLabel(String(repeating: "x", count: 70), number: 12).hasSuffix("x (12)"))
    }

    @Test func probeScheduleAndContents() throws {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 42))
        #expect(responder.start(now: t0).isEmpty)
        let firstProbe = try #require(responder.nextDeadline)
        #expect(firstProbe >= t0 && firstProbe <= t0 + .milliseconds(250))
        #expect(responder.tick(now: firstProbe - .milliseconds(1)).isEmpty)
        var probeTimes: [ContinuousClock.Instant] = []
        var now = firstProbe
        for index in 0..<3 {
            let out = sends(responder.tick(now: now))
            #expect(out.count == 1)
            let (probe, destination, at) = try #require(out.first)
            #expect(destination == .multicast && at == now)
            #expect(!probe.isResponse)
            #expect(probe.questions.map(\.name) == [responder.instanceName, responder.hostName])
            #expect(probe.questions.allSatisfy { $0.type == .any && $0.unicastResponse == (index == 0) })
            #expect(Set(probe.authorities.map(\.type)) == [.srv, .txt, .a])
            #expect(probe.answers.isEmpty)
            _ = try DNSMessage(bytes: probe.encoded())
            probeTimes.append(now)
            now = try #require(responder.nextDeadline)
        }
        #expect(probeTimes[1] - probeTimes[0] == .milliseconds(250))
        #expect(probeTimes[2] - probeTimes[1] == .milliseconds(250))
        #expect(now - probeTimes[2] == .milliseconds(250))
        // Different seeds give different initial delays: the delay really comes from the injected source.
        let delays = (0..<8).map { seed -> Duration in
            var r = Responder(registration: Self.registration, randomSource: SplitMix64(seed: UInt64(seed)))
            _ = r.start(now: t0)
            return r.nextDeadline! - t0
        }
        #expect(Set(delays).count > 1)
    }

    @Test func announcesTwiceOneSecondApart() throws {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 3))
        _ = responder.start(now: t0)
        var now = t0
        for _ in 0..<4 { now = responder.nextDeadline!; _ = responder.tick(now: now) }
        // That fourth tick ended probing and sent the first announcement.
        #expect(responder.state == .announcing(sent: 1))
        let second = try #require(responder.nextDeadline)
        #expect(second - now == .seconds(1))
        let out = sends(responder.tick(now: second))
        #expect(responder.state == .running)
        #expect(responder.nextDeadline == nil)
        let announcement = try #require(out.first?.0)
        #expect(announcement.isResponse && announcement.flags & DNSMessage.authoritativeFlag != 0)
        #expect(Set(announcement.answers) == Set(responder.records))
        #expect(announcement.answers.filter(\.cacheFlush).map(\.type).sorted() == [.a, .txt, .srv].sorted())
    }

    @Test func registeredEventAfterProbing() {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 4))
        _ = responder.start(now: t0)
        var all: [ResponderEvent] = []
        var now = t0
        while let deadline = responder.nextDeadline { now = deadline; all += events(responder.tick(now: now)) }
        #expect(all == [.registered(instanceName: responder.instanceName)])
    }

    @Test func conflictDuringProbingRenames() throws {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 5))
        _ = responder.start(now: t0)
        var now = responder.nextDeadline!
        _ = responder.tick(now: now)  // first probe
        let original = responder.instanceName
        // Our own probe/announcement echoed back is not a conflict.
        #expect(responder.receive(.response(answers: responder.records), sourcePort: 5353, now: now).isEmpty)
        // Another host answers with a different SRV for our name.
        let other = DNSResourceRecord(name: original, data: .srv(priority: 0, weight: 0, port: 9999, target: "other.local."), ttl: 120, cacheFlush: true)
        let actions = responder.receive(.response(answers: [other]), sourcePort: 5353, now: now)
        let renamed = DNSName(labels: ["Alice's Game (2)", "_ogk", "_tcp", "local"])
        #expect(events(actions) == [.renamed(from: original, to: renamed)])
        #expect(responder.instanceName == renamed)
        #expect(responder.state == .probing(sent: 0))
        // Probing restarts: three new probes for the new name.
        now = responder.nextDeadline!
        let probe = try #require(sends(responder.tick(now: now)).first?.0)
        #expect(probe.questions.first?.name == renamed)
        // A second conflict → (3).
        let other2 = DNSResourceRecord(name: renamed, data: .txt(TXTRecord(["x": "y"])), ttl: 4500, cacheFlush: true)
        _ = responder.receive(.response(answers: [other2]), sourcePort: 5353, now: now)
        #expect(responder.instanceName.labels[0] == "Alice's Game (3)")
        // A host-name conflict renames the host.
        let hostClash = DNSResourceRecord(name: "alicehost.local.", data: .a(IPv4Address(10, 9, 9, 9)), ttl: 120, cacheFlush: true)
        _ = responder.receive(.response(additionals: [hostClash]), sourcePort: 5353, now: now)
        #expect(responder.hostName == "alicehost-2.local.")
        #expect(responder.srvRecord.data == .srv(priority: 0, weight: 0, port: 4242, target: "alicehost-2.local."))
        // Eventually registers under the new names.
        while let deadline = responder.nextDeadline, responder.state != .running { now = deadline; _ = responder.tick(now: now) }
        #expect(responder.state == .running)
    }

    @Test func simultaneousProbeTieBreak() throws {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 6))
        _ = responder.start(now: t0)
        let now = responder.nextDeadline!
        _ = responder.tick(now: now)
        // Our own probe echoed back: equal → ignored.
        let ownProbe = try #require(sends(responder.tick(now: now + .milliseconds(250))).first?.0)
        #expect(responder.receive(ownProbe, sourcePort: 5353, now: now).isEmpty)
        #expect(responder.state == .probing(sent: 2))
        // A probe with lexicographically smaller data (same TXT, SRV port 1 < 4242): we win and carry on.
        let weaker = DNSResourceRecord(name: responder.instanceName, data: .srv(priority: 0, weight: 0, port: 1, target: "alicehost.local."), ttl: 120)
        _ = responder.receive(
            .query([DNSQuestion(name: responder.instanceName, type: .any)], authorities: [weaker, responder.txtRecord]), sourcePort: 5353, now: now)
        #expect(responder.state == .probing(sent: 2))
        // A probe with greater data (port 60000): we lose, wait 1 s and probe again under the same name.
        let stronger = DNSResourceRecord(name: responder.instanceName, data: .srv(priority: 0, weight: 0, port: 60000, target: "alicehost.local."), ttl: 120)
        let name = responder.instanceName
        // Records are compared sorted by class, type, rdata: a lone SRV (type 33) beats our TXT (type 16).
        #expect(Responder.compareForTieBreak([responder.srvRecord, responder.txtRecord], [weaker]) == -1)
        _ = responder.receive(
            .query([DNSQuestion(name: responder.instanceName, type: .any)], authorities: [responder.txtRecord, stronger]), sourcePort: 5353, now: now)
        #expect(responder.state == .probing(sent: 0))
        #expect(responder.nextDeadline == now + .seconds(1))
        #expect(responder.instanceName == name)
    }

    @Test func answersServiceTypeQueryWithAdditionals() throws {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 7))
        let now = register(&responder)
        let query = DNSMessage.query([DNSQuestion(name: Self.type.domainName, type: .ptr)])
        let out = sends(responder.receive(query, sourcePort: 5353, now: now))
        let (response, destination, at) = try #require(out.first)
        #expect(destination == .multicast)
        #expect(at >= now + .milliseconds(20) && at <= now + .milliseconds(120), "shared PTR answers are delayed 20–120 ms")
        #expect(response.answers == [responder.ptrRecord])
        #expect(Set(response.additionals.map(\.type)) == [.srv, .txt, .a, .nsec])
        #expect(response.additionals.contains(responder.srvRecord))
        #expect(response.additionals.contains(responder.txtRecord))
    }

    @Test func answersInstanceAndHostQueries() throws {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 8))
        let now = register(&responder)
        let srvQuery = DNSMessage.query([DNSQuestion(name: responder.instanceName, type: .srv), DNSQuestion(name: responder.instanceName, type: .txt)])
        let (srvResponse, _, at) = try #require(sends(responder.receive(srvQuery, sourcePort: 5353, now: now)).first)
        #expect(at == now, "unique answers go out immediately")
        #expect(srvResponse.answers == [responder.srvRecord, responder.txtRecord])
        #expect(srvResponse.additionals.contains(responder.addressRecords[0]))
        let hostQuery = DNSMessage.query([DNSQuestion(name: "ALICEHOST.local.", type: .a)])
        #expect(sends(responder.receive(hostQuery, sourcePort: 5353, now: now)).first?.0.answers == responder.addressRecords)
        // AAAA for our host: negative answer with NSEC listing only A.
        let aaaa = DNSMessage.query([DNSQuestion(name: responder.hostName, type: .aaaa)])
        let nsec = try #require(sends(responder.receive(aaaa, sourcePort: 5353, now: now)).first?.0.answers.first)
        #expect(nsec.data == .nsec(nextName: responder.hostName, types: [.a]))
        // Unrelated names get nothing.
        #expect(responder.receive(.query([DNSQuestion(name: "_other._tcp.local.", type: .ptr)]), sourcePort: 5353, now: now).isEmpty)
        // Service type enumeration.
        let enumeration = try #require(
            sends(responder.receive(.query([DNSQuestion(name: Responder.serviceEnumerationName, type: .ptr)]), sourcePort: 5353, now: now)).first?.0)
        #expect(enumeration.answers.first?.data == .ptr(Self.type.domainName))
    }

    @Test func knownAnswerSuppression() throws {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 9))
        let now = register(&responder)
        let question = DNSQuestion(name: Self.type.domainName, type: .ptr)
        var known = responder.ptrRecord
        known.ttl = 2250  // exactly half of 4500: still suppresses
        #expect(responder.receive(.query([question], knownAnswers: [known]), sourcePort: 5353, now: now).isEmpty)
        known.ttl = 2249  // less than half: we must answer
        #expect(sends(responder.receive(.query([question], knownAnswers: [known]), sourcePort: 5353, now: now)).count == 1)
        // A known answer for somebody else's instance does not suppress ours.
        let foreign = DNSResourceRecord(name: Self.type.domainName, data: .ptr("Bob._ogk._tcp.local."), ttl: 4500)
        #expect(sends(responder.receive(.query([question], knownAnswers: [foreign]), sourcePort: 5353, now: now)).count == 1)
    }

    @Test func legacyUnicastQueryGetsDirectReply() throws {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 10))
        let now = register(&responder)
        var query = DNSMessage.query([DNSQuestion(name: responder.instanceName, type: .srv)])
        query.id = 777
        let (reply, destination, _) = try #require(sends(responder.receive(query, sourcePort: 50000, now: now)).first)
        #expect(destination == .replyToSender)
        #expect(reply.id == 777 && reply.questions == query.questions)
        #expect(reply.allRecords.allSatisfy { $0.ttl <= 10 && !$0.cacheFlush })
    }

    @Test func noAnswersWhileProbing() {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 11))
        _ = responder.start(now: t0)
        _ = responder.tick(now: responder.nextDeadline!)
        #expect(responder.receive(.query([DNSQuestion(name: Self.type.domainName, type: .ptr)]), sourcePort: 5353, now: t0).isEmpty)
    }

    @Test func conflictAfterRegistrationReprobes() {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 12))
        let now = register(&responder)
        let other = DNSResourceRecord(name: responder.instanceName, data: .srv(priority: 0, weight: 0, port: 1, target: "x.local."), ttl: 120, cacheFlush: true)
        let actions = responder.receive(.response(answers: [other]), sourcePort: 5353, now: now)
        #expect(events(actions) == [.conflictDetected(responder.instanceName)])
        #expect(responder.state == .probing(sent: 0))
    }

    @Test func goodbyeOnStop() throws {
        var responder = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 13))
        let now = register(&responder)
        let actions = responder.stop(now: now)
        let goodbye = try #require(sends(actions).first?.0)
        #expect(goodbye.isResponse)
        #expect(goodbye.answers.count == responder.records.count)
        #expect(goodbye.answers.allSatisfy { $0.ttl == 0 })
        #expect(
            Set(
                goodbye.answers.map {
                    var r = $0; r.ttl = 0; return r
                })
                == Set(
                    responder.records.map {
                        var r = $0; r.ttl = 0; return r
                    }))
        #expect(events(actions) == [.stopped])
        #expect(responder.state == .stopped)
        #expect(responder.stop(now: now).isEmpty)
        // Stopping before anything was announced sends no goodbye.
        var early = Responder(registration: Self.registration, randomSource: SplitMix64(seed: 14))
        _ = early.start(now: t0)
        #expect(sends(early.stop(now: t0)).isEmpty)
    }
}
