import Foundation

/// The terminal peer picker's state machine: what to print and do for each typed line and session event.
///
/// Screens: a connection-type menu (only when both `.nearby` and `.online` are allowed), then the list of nearby
/// players, numbered in order of appearance. A number asks that player to connect; `q` cancels. A request from
/// another player is asked as "X wants to connect. Accept? [y/n]" and the next line answers it.
struct PeerPickerModel: Sendable {
    /// Where the picker is.
    enum Phase: Equatable, Sendable {
        /// Not shown yet.
        case idle
        /// Waiting for the connection type.
        case choosingType
        /// Listing nearby players.
        case browsing
        /// Asked `peer` to connect; waiting for its answer.
        case connecting(String)
        /// Finished.
        case done
    }

    /// Where the picker is.
    private(set) var phase: Phase = .idle
    /// Nearby players in order of appearance: peer id and display name.
    private(set) var peers: [(id: String, name: String)] = []
    /// Requests waiting for an answer, oldest first; the first one is being asked.
    private(set) var requests: [(id: String, name: String)] = []
    private let types: GKPeerPickerConnectionType

    /// Creates the model for the allowed connection types: `.nearby`, or `.nearby` and `.online` (the picker
    /// refuses an online-only mask before it gets here).
    init(connectionTypes: GKPeerPickerConnectionType) {
        self.types = connectionTypes
    }

    /// Shows the first screen: the connection-type menu when online is offered too, else the nearby players.
    mutating func start() -> [PeerPickerEffect] {
        guard phase == .idle else { return [] }
        if types.contains(.online) {
            phase = .choosingType
            return [.show("How do you want to play?\n  1) Nearby (local network)\n  2) Online\nType 1 or 2, or q to cancel.")]
        }
        return [.startNearby]
    }

    /// Nearby play started; `available` lists the players already found.
    mutating func nearbyStarted(available: [(id: String, name: String)]) -> [PeerPickerEffect] {
        phase = .browsing
        peers = available
        return [.show("Looking for nearby players…")] + listing()
    }

    /// A line of input.
    mutating func line(_ raw: String) -> [PeerPickerEffect] {
        guard phase != .done else { return [] }
        let text = raw.trimmingCharacters(in: .whitespaces).lowercased()
        if let request = requests.first {
            switch text {
            case "y", "yes":
                requests.removeFirst()
                return [.show("Accepting \(request.name)…"), .accept(request.id)]
            case "n", "no":
                requests.removeFirst()
                return [.show("Declined \(request.name)."), .deny(request.id)] + nextQuestion()
            default:
                return [.show("\(request.name) wants to connect. Accept? [y/n]")]
            }
        }
        if text == "q" || text == "quit" {
            return cancel()
        }
        switch phase {
        case .choosingType:
            switch text {
            case "1": return [.chooseNearby, .startNearby]
            case "2": phase = .done; return [.chooseOnline]
            default: return [.show("Type 1 for nearby, 2 for online, or q to cancel.")]
            }
        case .browsing:
            guard let number = Int(text), peers.indices.contains(number - 1) else {
                return [.show(peers.isEmpty ? "No players yet; wait, or type q to cancel." : "Type a number from 1 to \(peers.count), or q to cancel.")]
            }
            let peer = peers[number - 1]
            phase = .connecting(peer.id)
            return [.show("Connecting to \(peer.name)…"), .connect(peer.id)]
        case .connecting:
            return [.show("Still connecting; type q to cancel.")]
        case .idle, .done:
            return []
        }
    }

    /// The input ended: same as cancelling.
    mutating func inputEnded() -> [PeerPickerEffect] {
        phase == .done ? [] : cancel()
    }

    /// A nearby player appeared.
    mutating func peerAvailable(_ id: String, name: String) -> [PeerPickerEffect] {
        guard !peers.contains(where: { $0.id == id }) else { return [] }
        peers.append((id, name))
        return phase == .browsing && requests.isEmpty ? listing() : []
    }

    /// A nearby player disappeared.
    mutating func peerGone(_ id: String) -> [PeerPickerEffect] {
        guard let index = peers.firstIndex(where: { $0.id == id }) else { return [] }
        peers.remove(at: index)
        return phase == .browsing && requests.isEmpty ? listing() : []
    }

    /// A player asks to connect.
    mutating func request(from id: String, name: String) -> [PeerPickerEffect] {
        guard phase != .done, !requests.contains(where: { $0.id == id }) else { return [] }
        requests.append((id, name))
        return requests.count == 1 ? nextQuestion() : []
    }

    /// A player connected: the picker is done.
    mutating func connected(_ id: String, name: String) -> [PeerPickerEffect] {
        guard phase != .done else { return [] }
        phase = .done
        return [.show("Connected to \(name)."), .finishConnected(id)]
    }

    /// Our request to a player failed.
    mutating func failed(_ id: String, name: String, reason: String) -> [PeerPickerEffect] {
        guard phase == .connecting(id) else { return [] }
        phase = .browsing
        return [.show("Could not connect to \(name): \(reason)")] + listing()
    }

    private mutating func cancel() -> [PeerPickerEffect] {
        var effects: [PeerPickerEffect] = []
        if case .connecting(let peer) = phase { effects.append(.cancelConnect(peer)) }
        effects += requests.map { .deny($0.id) }
        requests = []
        phase = .done
        return effects + [.show("Cancelled."), .finishCancelled]
    }

    private func nextQuestion() -> [PeerPickerEffect] {
        guard let request = requests.first else { return phase == .browsing ? listing() : [] }
        return [.show("\(request.name) wants to connect. Accept? [y/n]")]
    }

    private func listing() -> [PeerPickerEffect] {
        guard !peers.isEmpty else { return [.show("No nearby players yet. Type q to cancel.")] }
        let lines = peers.enumerated().map { "  \($0.offset + 1)) \($0.element.name)" }
        return [.show((["Nearby players:"] + lines + ["Type a number to connect, or q to cancel."]).joined(separator: "\n"))]
    }
}
