import GameCenterProtocol

/// How this device reaches one other member of a match: directly, at an address that answered, or through the
/// relay. Pure state on an injected clock (seconds).
///
/// Probes go to every candidate every ``probeInterval``. The first answer makes the path direct, to the address
/// that answered. With no answer within ``probeGiveUp`` the path falls back to the relay, and the candidates are
/// probed again every ``reprobeInterval``. A direct path is probed every ``keepaliveInterval``; when no answer came
/// for ``silenceLimit`` it falls back too. Only answers count: a probe from the peer proves the way to this device,
/// not the way back.
struct PeerPath: Sendable, Equatable {
    /// Where the path stands.
    enum State: Sendable, Equatable {
        /// Nothing to try (no candidates yet): the relay.
        case relay
        /// Trying the candidates since `since`, through the relay meanwhile.
        case probing(since: Double)
        /// Direct to `address`, whose last answer came at `lastAnswer`.
        case direct(PeerCandidate, lastAnswer: Double)
        /// No candidate answered, or the direct path went silent: the relay, trying the candidates now and then.
        case fallback
    }

    /// What a change of path asks of the sender.
    enum Change: Sendable, Equatable {
        case none
        /// Send to this address from now on.
        case direct(PeerCandidate)
        /// Send through the relay from now on: what the direct path did not confirm goes through the relay again.
        case relay
    }

    static let probeInterval = 0.1
    static let probeGiveUp = 2.0
    static let keepaliveInterval = 0.5
    static let silenceLimit = 2.0
    static let reprobeInterval = 1.0

    private(set) var state = State.relay
    /// Where the peer may be reached: what it offered, then addresses its probes came from.
    private(set) var candidates: [PeerCandidate] = []
    private var nextProbe = 0.0

    /// The address to send to, while the path is direct.
    var directAddress: PeerCandidate? {
        if case .direct(let address, _) = state { return address }
        return nil
    }

    /// The peer offered `offered`: probing starts (or goes on with the new addresses).
    mutating func offered(_ offered: [PeerCandidate], now: Double) {
        for candidate in offered where !candidates.contains(candidate) && candidates.count < PeerOffer.maximumCandidates {
            candidates.append(candidate)
        }
        switch state {
        case .relay, .fallback:
            guard !candidates.isEmpty else { return }
            state = .probing(since: now)
            nextProbe = now
        case .probing, .direct:
            break
        }
    }

    /// A probe from the peer came from `address`: it is worth trying too (the peer's address as this device sees it).
    mutating func probed(from address: PeerCandidate, now: Double) {
        guard !candidates.contains(address) else { return }
        offered([address], now: now)
    }

    /// What is due at `now`: the addresses to probe, and a change of path.
    mutating func tick(now: Double) -> (probes: [PeerCandidate], change: Change) {
        switch state {
        case .relay:
            return ([], .none)
        case .probing(let since):
            if now - since >= Self.probeGiveUp {
                state = .fallback
                nextProbe = now + Self.reprobeInterval
                return ([], .none)
            }
            return (dueProbes(now: now, every: Self.probeInterval, to: candidates), .none)
        case .direct(let address, let lastAnswer):
            if now - lastAnswer > Self.silenceLimit {
                state = .fallback
                nextProbe = now + Self.reprobeInterval
                return ([], .relay)
            }
            return (dueProbes(now: now, every: Self.keepaliveInterval, to: [address]), .none)
        case .fallback:
            return (dueProbes(now: now, every: Self.reprobeInterval, to: candidates), .none)
        }
    }

    private mutating func dueProbes(now: Double, every interval: Double, to addresses: [PeerCandidate]) -> [PeerCandidate] {
        guard now >= nextProbe else { return [] }
        nextProbe = max(nextProbe + interval, now)
        return addresses
    }

    /// The peer answered a probe from `address`. While direct, only answers from the address in use count (a late
    /// answer from another candidate must not move the path).
    mutating func answered(from address: PeerCandidate, now: Double) -> Change {
        if case .direct(let current, _) = state {
            if current == address { state = .direct(address, lastAnswer: now) }
            return .none
        }
        state = .direct(address, lastAnswer: now)
        nextProbe = now + Self.keepaliveInterval
        return .direct(address)
    }
}
