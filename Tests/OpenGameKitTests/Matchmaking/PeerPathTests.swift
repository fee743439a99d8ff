import GameCenterProtocol
import Testing
@testable import OpenGameKit

/// `PeerPath` on an injected clock: probing, the first answer, giving up, silence and trying again.
@Suite struct PeerPathTests {
    static let lan = PeerCandidate(address: [192, 168, 1, 20], port: 4000)!
    static let seen = PeerCandidate(address: [203, 0, 113, 7], port: 61_000)!

    /// Ticks every 10 ms from `from` to `to`; returns how many probes went to each address.
    static func run(_ path: inout PeerPath, from: Double, to: Double) -> (probes: [PeerCandidate: Int], changes: [PeerPath.Change]) {
        var probes: [PeerCandidate: Int] = [:]
        var changes: [PeerPath.Change] = []
        var now = from
        while now < to {
            let (sent, change) = path.tick(now: now)
            for address in sent { probes[address, default: 0] += 1 }
            if change != .none { changes.append(change) }
            now += 0.01
        }
        return (probes, changes)
    }

    @Test func nothingIsProbedBeforeAnOfferAndEveryCandidateIsProbedAfter() {
        var path = PeerPath()
        #expect(Self.run(&path, from: 0, to: 1).probes.isEmpty)
        #expect(path.state == .relay)
        path.offered([Self.lan, Self.seen], now: 1)
        let (probes, _) = Self.run(&path, from: 1, to: 1.5)
        // Every 100 ms: at 1.0, 1.1, 1.2, 1.3, 1.4.
        #expect(probes == [Self.lan: 5, Self.seen: 5])
        #expect(path.directAddress == nil, "probing: data still goes through the relay")
    }

    @Test func theFirstAnswerMakesThePathDirectAndALateAnswerFromAnotherAddressDoesNotMoveIt() {
        var path = PeerPath()
        path.offered([Self.lan, Self.seen], now: 0)
        _ = Self.run(&path, from: 0, to: 0.3)
        do {
            let change = path.answered(from: Self.seen, now: 0.3)
            #expect(change == .direct(Self.seen))
        }
        #expect(path.directAddress == Self.seen)
        do {
            let change = path.answered(from: Self.lan, now: 0.31)
            #expect(change == .none)
        }
        #expect(path.directAddress == Self.seen)
        // Kept alive: only the address in use is probed, every 500 ms.
        let (probes, changes) = Self.run(&path, from: 0.31, to: 1.25)
        #expect(probes == [Self.seen: 1], "at 0.8")
        #expect(changes.isEmpty, "answered at 0.3: not silent for 2 s yet")
    }

    @Test func noAnswerWithinTwoSecondsFallsBackAndTheCandidatesAreTriedEverySecond() {
        var path = PeerPath()
        path.offered([Self.lan], now: 0)
        let (probes, changes) = Self.run(&path, from: 0, to: 2.5)
        #expect(probes[Self.lan] == 20, "every 100 ms for 2 s")
        #expect(changes.isEmpty, "the data went through the relay all along")
        #expect(path.state == .fallback)
        let (later, _) = Self.run(&path, from: 2.5, to: 5.5)
        #expect(later[Self.lan] == 3, "once a second in fallback")
        do {
            let change = path.answered(from: Self.lan, now: 5.5)
            #expect(change == .direct(Self.lan), "a path that starts answering is taken")
        }
    }

    @Test func aDirectPathSilentForTwoSecondsFallsBackToTheRelayAndComesBackWhenItAnswersAgain() {
        var path = PeerPath()
        path.offered([Self.lan], now: 0)
        _ = path.tick(now: 0)
        _ = path.answered(from: Self.lan, now: 0.05)
        var now = 0.05
        // Answers keep it direct.
        while now < 5 {
            _ = path.tick(now: now)
            if Int(now * 100) % 50 == 0 { _ = path.answered(from: Self.lan, now: now) }
            now += 0.01
        }
        #expect(path.directAddress == Self.lan)
        // Then nothing answers.
        let (_, changes) = Self.run(&path, from: 5, to: 7.5)
        #expect(changes == [.relay])
        #expect(path.directAddress == nil)
        do {
            let change = path.answered(from: Self.lan, now: 8)
            #expect(change == .direct(Self.lan))
        }
    }

    @Test func aProbeFromAnUnofferedAddressMakesItACandidate() {
        var path = PeerPath()
        path.probed(from: Self.seen, now: 0)
        #expect(path.candidates == [Self.seen])
        #expect(path.state == .probing(since: 0))
        path.probed(from: Self.seen, now: 0.5)
        #expect(path.candidates == [Self.seen], "no duplicates")
    }
}
