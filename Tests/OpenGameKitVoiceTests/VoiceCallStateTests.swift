import NIOCore
import OpenGameKit
import Testing
@testable import OpenGameKitVoice

/// The two-party call's rules, on ``VoiceCallState`` alone: no socket, no thread, time moved by the test.
@Suite struct VoiceCallStateTests {
    @Test func anAcceptedInvitationGoesDirectWhenAProbeIsAnsweredAndVoiceFlows() throws {
        var net = VoiceCallNetwork()
        net.run(try net.start(0), from: 0)
        #expect(net.heard == [[], [.invitation(callID: 1)]])
        #expect(net.path(0) == nil && net.path(1) == nil)
        try net.accept(1)
        // Each side's first probe is answered at once: both are connected, straight to the other's candidate.
        #expect(net.heard == [[.started], [.invitation(callID: 1), .started]])
        let direct = try #require(net.path(0))
        #expect(direct.hasPrefix("direct") && direct.hasSuffix("10.0.0.2:5000"), "\(direct)")
        #expect(net.path(1)?.hasSuffix("10.0.0.1:4000") == true)
        net.on(0) { state, now in state.send(voice: [1, 2, 3], at: now) }
        #expect(net.heard[1].last == .played([1, 2, 3]))
        // Connected, the call goes on while both sides keep each other alive.
        net.advance(by: .seconds(10))
        #expect(net.heard == [[.started], [.invitation(callID: 1), .started, .played([1, 2, 3])]])
        #expect(net.path(0) != nil && net.path(1) != nil)
    }

    @Test func withoutAnAnsweredProbeTheCallFallsBackToTheRealTimeChannelAtTheDeadline() throws {
        var net = VoiceCallNetwork()
        net.directPathOpen = false
        net.run(try net.start(0), from: 0)
        try net.accept(1)
        // Both sides probe at once, then every 100 ms, until the deadline (2 s) has passed.
        net.advance(by: .seconds(2))
        #expect(net.datagramsSent == [21, 21])
        #expect(net.heard == [[], [.invitation(callID: 1)]])
        #expect(net.path(0) == nil && net.path(1) == nil)
        net.advance(by: .milliseconds(1))
        #expect(net.heard == [[.started], [.invitation(callID: 1), .started]])
        #expect(net.path(0) == "real-time" && net.path(1) == "real-time")
        net.on(1) { state, now in state.send(voice: [9], at: now) }
        #expect(net.heard[0].last == .played([9]))
    }

    @Test func withoutAnAnsweredProbeOrARealTimeChannelTheCallFails() throws {
        var net = VoiceCallNetwork()
        net.directPathOpen = false
        net.realTimeChannel = false
        net.run(try net.start(0), from: 0)
        try net.accept(1)
        net.advance(by: .milliseconds(2_001), ticking: [0])
        // The caller hangs up: the callee hears the call end before it connected.
        #expect(net.heard == [[.notStarted(.communicationsFailure)], [.invitation(callID: 1), .notStarted(.cancelled)]])
        #expect(net.sides[0].isEmpty && net.sides[1].isEmpty)
    }

    @Test func twoSidesInvitingAtOnceMakeOneCallTheLargerTokensInvitationStanding() throws {
        var net = VoiceCallNetwork()
        let invitations = [try net.start(0), try net.start(1)]
        // Each invitation reaches the other side before anything else from it (the client's channel keeps order).
        var answers: [[VoiceCallEffect]] = [[], []]
        for side in [0, 1] {
            guard case .signal(_, let invitation) = invitations[1 - side].first else { throw GKError(.unknown, "no invitation sent") }
            net.signals[1 - side].append(invitation)
            answers[side] = net.decide(side) { state, now in
                state.received(
                    invitation.bytes, from: VoiceCallNetwork.names[1 - side], own: VoiceCallNetwork.names[side], at: now,
                    candidates: { [VoiceCallNetwork.candidates[side]] })
            }
        }
        net.run(answers[0], from: 0)
        net.run(answers[1], from: 1)
        // Bob's token is the larger: alice drops her invitation and accepts his at once; nobody rings.
        #expect(net.heard == [[.started], [.started]])
        let alice = try #require(net.sides[0].calls["bob"]), bob = try #require(net.sides[1].calls["alice"])
        #expect(alice.token == VoiceCallNetwork.token(1) && bob.token == VoiceCallNetwork.token(1))
        #expect(!alice.isCaller && bob.isCaller)
        #expect(net.signals[0].map(\.kind) == [.invite, .accept] && net.signals[1].map(\.kind) == [.invite])
    }

    @Test func aDeclinedInvitationDoesNotStart() throws {
        var net = VoiceCallNetwork()
        net.run(try net.start(0), from: 0)
        net.on(1) { state, _ in state.deny(callID: 1) }
        #expect(net.heard == [[.notStarted(.userDenied)], [.invitation(callID: 1)]])
        #expect(net.signals[1].map(\.kind) == [.deny])
        #expect(net.sides[0].isEmpty && net.sides[1].isEmpty)
        // An id no invitation has changes nothing.
        #expect(net.decide(1) { state, _ in state.deny(callID: 1) }.isEmpty)
    }

    @Test(arguments: [0, 1])
    func anUnansweredInvitationFailsOnlyOnceThirtySecondsHavePassed(ticking: Int) throws {
        var net = VoiceCallNetwork()
        net.run(try net.start(0), from: 0)
        net.advance(by: .seconds(30), ticking: [ticking])
        #expect(net.heard == [[], [.invitation(callID: 1)]])
        net.advance(by: .milliseconds(1), ticking: [ticking])
        // The side whose clock ran out fails and hangs up; the other hears the call withdrawn.
        let other: VoiceCallNetwork.Event = .notStarted(ticking == 0 ? .cancelled : .communicationsFailure)
        let own: VoiceCallNetwork.Event = .notStarted(ticking == 0 ? .communicationsFailure : .cancelled)
        #expect(net.heard == [[own], [.invitation(callID: 1), other]])
        #expect(net.sides[0].isEmpty && net.sides[1].isEmpty)
    }

    @Test func aConnectedCallThatHearsNothingForFiveSecondsEnds() throws {
        var net = VoiceCallNetwork()
        net.run(try net.start(0), from: 0)
        try net.accept(1)
        // Keep-alives hold a quiet call open.
        net.advance(by: .seconds(10))
        #expect(net.path(0) != nil && net.path(1) != nil)
        // Bob's side stops sending anything.
        let lastHeard = try #require(net.sides[0].calls["bob"]).lastHeard
        net.advance(by: lastHeard + .seconds(5) - net.now, ticking: [0])
        #expect(net.heard == [[.started], [.invitation(callID: 1), .started]])
        net.advance(by: .milliseconds(1), ticking: [0])
        #expect(net.heard == [[.started, .stopped(.communicationsFailure)], [.invitation(callID: 1), .started, .stopped(nil)]])
        #expect(net.sides[0].isEmpty && net.sides[1].isEmpty)
    }

    @Test(arguments: [0, 1])
    func eitherSideStopsACallAndBothHearItEnd(stopping: Int) throws {
        var net = VoiceCallNetwork()
        try net.connect()
        net.on(stopping) { state, _ in state.stop(with: VoiceCallNetwork.names[1 - stopping]) }
        #expect(net.heard[0].last == .stopped(nil) && net.heard[1].last == .stopped(nil))
        #expect(net.sides[0].isEmpty && net.sides[1].isEmpty)
        // Before it connected, a stopped call is cancelled on both sides (bob invites: alice's token was used).
        net.run(try net.start(1), from: 1)
        #expect(net.heard[0].last == .invitation(callID: 2))
        net.on(1) { state, _ in state.stop(with: "alice") }
        #expect(net.heard[0].last == .notStarted(.cancelled) && net.heard[1].last == .notStarted(.cancelled))
        #expect(net.sides[0].isEmpty && net.sides[1].isEmpty)
    }

    @Test func staleUnknownAndMalformedSignalsAreRefusedAndChangeNothing() throws {
        var net = VoiceCallNetwork()
        try net.connect()
        let token = VoiceCallNetwork.token(0), other = [UInt8](repeating: 7, count: 16)
        let key = try #require(net.sides[1].calls["alice"]).publicKey
        let stale: [[UInt8]] = [
            VoiceCallSignal(kind: .hangUp, token: other).bytes,  // another call's hang-up
            VoiceCallSignal(kind: .accept, token: token, publicKey: key).bytes,  // an acceptance of a call already live
            VoiceCallSignal(kind: .deny, token: token).bytes,  // a denial of a call already live
            VoiceCallSignal(kind: .invite, token: token, publicKey: key).bytes,  // a replayed invitation
            [0x4F, 0x47, 0x56, 0x43, 1, 9],  // not a signal
        ]
        let heard = net.heard
        for bytes in stale {
            let effects = net.decide(0) { state, now in
                state.received(bytes, from: "bob", own: "alice", at: now, candidates: { [VoiceCallNetwork.candidates[0]] })
            }
            #expect(effects.allSatisfy { if case .log = $0 { true } else { false } }, "\(effects)")
        }
        #expect(net.sides[0].statistics.signalsRefused == stale.count)
        #expect(net.heard == heard && net.path(0) != nil)
        // A datagram that does not authenticate is dropped.
        #expect(
            net.decide(0) { state, now in
                state.receivedDatagram([UInt8](repeating: 1, count: 64), from: try! SocketAddress(ipAddress: "10.0.0.9", port: 9), at: now)
            }.isEmpty)
        #expect(net.sides[0].statistics.datagramsDropped == 1)
        // The hang-up of the call that ended is refused once the call is gone.
        net.on(1) { state, _ in state.stop(with: "alice") }
        net.on(0) { state, now in state.received(VoiceCallSignal(kind: .hangUp, token: token).bytes, from: "bob", own: "alice", at: now, candidates: { [] }) }
        #expect(net.sides[0].statistics.signalsRefused == stale.count + 1)
    }
}
