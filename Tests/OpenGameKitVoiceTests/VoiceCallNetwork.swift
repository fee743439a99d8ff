import NIOCore
import OpenGameKit
@testable import OpenGameKitVoice

/// Test support: two ``VoiceCallState``s, "alice" (0) and "bob" (1), wired together in memory on a clock the test
/// moves. Effects are carried out at once: a signal reaches the other side's state, a datagram reaches the side whose
/// candidate it is addressed to unless ``directPathOpen`` is false, real-time data reaches the other side unless
/// ``realTimeChannel`` is false (a client without one), and what the client would hear is recorded per side.
struct VoiceCallNetwork {
    /// What a side's client heard, in order.
    enum Event: Equatable {
        case invitation(callID: Int)
        case started
        case notStarted(GKError.Code)
        case stopped(GKError.Code?)
        case played([UInt8])
    }

    static let names = ["alice", "bob"]
    static let candidates = [VoiceCallCandidate(address: [10, 0, 0, 1], port: 4000), VoiceCallCandidate(address: [10, 0, 0, 2], port: 5000)]

    var sides = [VoiceCallState(), VoiceCallState()]
    var heard: [[Event]] = [[], []]
    /// Signalling messages each side sent, in order.
    var signals: [[VoiceCallSignal]] = [[], []]
    /// Datagrams each side sent on the UDP path and on the real-time channel.
    var datagramsSent = [0, 0]
    var now = ContinuousClock.now
    /// Whether datagrams on the UDP path arrive.
    var directPathOpen = true
    /// Whether the clients have a real-time channel.
    var realTimeChannel = true

    /// The token a side's next call gets: alice's sorts before bob's.
    static func token(_ side: Int) -> [UInt8] { [UInt8(side + 1)] + [UInt8](repeating: 0, count: 15) }

    /// Decides on `side`, returning the effects without carrying them out (as if still in flight).
    mutating func decide(_ side: Int, _ body: (inout VoiceCallState, ContinuousClock.Instant) throws -> [VoiceCallEffect]) rethrows -> [VoiceCallEffect] {
        try body(&sides[side], now)
    }

    /// Decides on `side` and carries the effects out.
    mutating func on(_ side: Int, _ body: (inout VoiceCallState, ContinuousClock.Instant) throws -> [VoiceCallEffect]) rethrows {
        run(try decide(side, body), from: side)
    }

    /// `side` asks for a call with the other side.
    mutating func start(_ side: Int) throws -> [VoiceCallEffect] {
        try decide(side) { state, now in
            try state.start(with: Self.names[1 - side], own: Self.names[side], token: Self.token(side), at: now, candidates: { [Self.candidates[side]] })
        }
    }

    /// `side` answers its ringing invitation.
    mutating func accept(_ side: Int) throws {
        guard case .invitation(let callID) = heard[side].last else { throw GKError(.invalidParameter, "\(Self.names[side]) has no invitation") }
        try on(side) { state, now in try state.accept(callID: callID, at: now, candidates: { [Self.candidates[side]] }) }
    }

    /// Moves the clock by `duration`, in 20 ms ticks of `ticking` (both sides unless told).
    mutating func advance(by duration: Duration, ticking: [Int] = [0, 1]) {
        let end = now + duration
        while now < end {
            now = min(now + .milliseconds(20), end)
            for side in ticking { on(side) { state, now in state.tick(at: now) } }
        }
    }

    /// Carries out `effects` decided on `side`.
    mutating func run(_ effects: [VoiceCallEffect], from side: Int) {
        let other = 1 - side
        for effect in effects {
            switch effect {
            case .signal(_, let signal):
                signals[side].append(signal)
                on(other) { state, now in
                    state.received(signal.bytes, from: Self.names[side], own: Self.names[other], at: now, candidates: { [Self.candidates[other]] })
                }
            case .datagram(let bytes, let address):
                datagramsSent[side] += 1
                guard directPathOpen, let target = Self.candidates.firstIndex(where: { $0.socketAddress == address }) else { continue }
                let from = Self.candidates[side].socketAddress!
                on(target) { state, now in state.receivedDatagram(bytes, from: from, at: now) }
            case .realTime(_, let bytes):
                datagramsSent[side] += 1
                guard realTimeChannel else {
                    on(side) { state, _ in state.noRealTimeChannel(to: Self.names[other]) }
                    continue
                }
                on(other) { state, now in state.receivedRealTime(bytes, from: Self.names[side], at: now) }
            case .started(let participantID, let token):
                if sides[side].hasCall(with: participantID, token: token) { heard[side].append(.started) }
            case .notStarted(_, let error): heard[side].append(.notStarted(error.code))
            case .stopped(_, let error): heard[side].append(.stopped(error?.code))
            case .invitation(_, let callID): heard[side].append(.invitation(callID: callID))
            case .play(_, let payload): heard[side].append(.played(payload))
            case .forget, .log: continue
            }
        }
    }

    /// How `side` reaches the other side once connected: "direct <address>", "real-time", or nil.
    func path(_ side: Int) -> String? { sides[side].connectedPaths[Self.names[1 - side]] }

    /// Invites from alice, accepts on bob and lets the direct path be found.
    mutating func connect() throws {
        run(try start(0), from: 0)
        try accept(1)
        advance(by: .milliseconds(200))
    }
}
