import Foundation
import Synchronization

/// Lets the player choose a peer to play with (Game Kit's `GKPeerPickerController`), as a terminal UI.
///
/// ``show()`` offers nearby play, or nearby and online play (per ``connectionTypesMask``; online alone is refused,
/// as in the seed online play is offered beside nearby). When both are offered the user picks one and the delegate's
/// `didSelect` hears the choice; it is not called when there was nothing to choose. Choosing online dismisses the
/// picker: the app takes over. For nearby play the picker asks the
/// delegate for a session (or creates a peer-mode one), makes it available, and lists nearby players as they
/// appear and disappear; the user types a player's number to ask them to connect, or `q` to cancel. A request
/// from another player is asked as "X wants to connect. Accept? [y/n]". Once connected, the picker dismisses,
/// gives the session back to its previous delegate and calls `didConnectPeer`.
///
/// Input and output are injectable, so the picker runs without a terminal; the default reads standard input
/// and writes standard output. Delegate methods are called from the picker's own task.
public final class GKPeerPickerController: Sendable {
    private struct State {
        var mask: GKPeerPickerConnectionType = .nearby
        weak var delegate: (any GKPeerPickerControllerDelegate)?
        var isVisible = false
        var task: Task<Void, Never>?
        var session: GKSession?
        var observer: PeerPickerSessionObserver?
        weak var previousDelegate: (any GKSessionDelegate)?
        var generation = 0
    }

    private let state = Mutex(State())
    private let input: AsyncStream<String>
    private let output: @Sendable (String) -> Void

    /// A picker that reads standard input and writes standard output.
    public convenience init() {
        self.init(input: StandardInputLines.shared) { text in
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
        }
    }

    /// A picker that reads lines from `input` and writes text to `output`.
    public init(input: AsyncStream<String>, output: @escaping @Sendable (String) -> Void) {
        self.input = input
        self.output = output
    }

    /// The connection types offered: `.nearby` (the default), or `[.nearby, .online]` (then the user chooses).
    ///
    /// A mask ``setConnectionTypesMask(_:)`` refuses (online alone, none, unknown bits) is not taken: the previous
    /// mask stays. Use that method to hear why.
    public var connectionTypesMask: GKPeerPickerConnectionType {
        get { state.withLock { $0.mask } }
        set { try? setConnectionTypesMask(newValue) }
    }

    /// Sets ``connectionTypesMask``, or throws `invalidParameter` saying what is allowed: `.nearby`, or `.online`
    /// together with `.nearby` (online play is offered beside nearby play, never alone).
    public func setConnectionTypesMask(_ mask: GKPeerPickerConnectionType) throws {
        let known: GKPeerPickerConnectionType = [.nearby, .online]
        guard known.isSuperset(of: mask), mask.contains(.nearby) else {
            let what = mask == .online ? "online alone" : mask.isEmpty ? "an empty mask" : "mask \(mask.rawValue)"
            throw GKError(
                .invalidParameter,
                "connectionTypesMask \(what) is not allowed: offer .nearby, or .online together with .nearby ([.nearby, .online])")
        }
        state.withLock { $0.mask = mask }
    }

    /// Receives the user's choices (held weakly).
    public weak var delegate: (any GKPeerPickerControllerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Whether the picker is shown.
    public var isVisible: Bool { state.withLock { $0.isVisible } }

    /// Shows the picker and starts reading input.
    public func show() {
        state.withLock { state in
            guard !state.isVisible else { return }
            state.isVisible = true
            state.generation += 1
            let generation = state.generation
            let mask = state.mask
            state.task = Task { [self] in await run(mask: mask, generation: generation) }
        }
    }

    /// Hides the picker without telling the delegate; a session it was using gets its previous delegate back.
    public func dismiss() {
        let task = state.withLock { state -> Task<Void, Never>? in
            defer { state.task = nil }
            return finish(&state)
        }
        task?.cancel()
    }

    private func finish(_ state: inout State) -> Task<Void, Never>? {
        guard state.isVisible else { return nil }
        state.isVisible = false
        if let session = state.session, state.observer != nil, session.delegate === state.observer {
            session.delegate = state.previousDelegate
        }
        state.observer = nil
        state.previousDelegate = nil
        return state.task
    }

    private enum Input: Sendable {
        case line(String)
        case inputEnded
        case session(PeerPickerSessionObserver.Event)
    }

    private func run(mask: GKPeerPickerConnectionType, generation: Int) async {
        let (events, continuation) = AsyncStream.makeStream(of: Input.self)
        let input = self.input
        let reader = Task {
            for await line in input {
                if Task.isCancelled { return }
                continuation.yield(.line(line))
            }
            continuation.yield(.inputEnded)
        }
        defer {
            reader.cancel()
            continuation.finish()
        }
        var model = PeerPickerModel(connectionTypes: mask)
        guard await perform(model.start(), model: &model, continuation: continuation) else { return }
        for await event in events {
            guard !Task.isCancelled, state.withLock({ $0.isVisible && $0.generation == generation }) else { return }
            let session = state.withLock { $0.session }
            let name: (String) -> String = { session?.displayName(forPeer: $0) ?? $0 }
            let effects: [PeerPickerEffect]
            switch event {
            case .line(let line): effects = model.line(line)
            case .inputEnded: effects = model.inputEnded()
            case .session(.state(let peer, .available)): effects = model.peerAvailable(peer, name: name(peer))
            case .session(.state(let peer, .unavailable)): effects = model.peerGone(peer)
            case .session(.state(let peer, .connected)): effects = model.connected(peer, name: name(peer))
            case .session(.state): effects = []
            case .session(.request(let peer)): effects = model.request(from: peer, name: name(peer))
            case .session(.failed(let peer, let reason)): effects = model.failed(peer, name: name(peer), reason: reason)
            }
            guard await perform(effects, model: &model, continuation: continuation) else { return }
        }
    }

    /// Carries out effects; returns `false` once the picker is finished.
    private func perform(_ effects: [PeerPickerEffect], model: inout PeerPickerModel, continuation: AsyncStream<Input>.Continuation) async -> Bool {
        var pending = effects
        while !pending.isEmpty {
            let effect = pending.removeFirst()
            let session = state.withLock { $0.session }
            switch effect {
            case .show(let text):
                output(text)
            case .chooseNearby:
                delegate?.peerPickerController(self, didSelect: .nearby)
            case .startNearby:
                let chosen: GKSession
                if let provided = delegate?.peerPickerController(self, sessionFor: .nearby) {
                    chosen = provided
                } else {
                    do {
                        chosen = try GKSession(sessionID: nil, displayName: nil, sessionMode: .peer)
                    } catch {
                        output("Nearby play is unavailable: \(error)")
                        pending += model.inputEnded()
                        continue
                    }
                }
                let observer = PeerPickerSessionObserver { continuation.yield(.session($0)) }
                state.withLock { state in
                    state.session = chosen
                    state.observer = observer
                    state.previousDelegate = chosen.delegate
                }
                chosen.delegate = observer
                chosen.isAvailable = true
                let available = chosen.peers(with: .available).map { (id: $0, name: chosen.displayName(forPeer: $0) ?? $0) }
                pending += model.nearbyStarted(available: available)
            case .chooseOnline:
                delegate?.peerPickerController(self, didSelect: .online)
                _ = state.withLock { finish(&$0) }
                return false
            case .connect(let peer):
                session?.connect(toPeer: peer, withTimeout: 30)
            case .cancelConnect(let peer):
                session?.cancelConnect(toPeer: peer)
            case .accept(let peer):
                do {
                    try session?.acceptConnection(fromPeer: peer)
                } catch {
                    output("Could not accept: \(error)")
                }
            case .deny(let peer):
                session?.denyConnection(fromPeer: peer)
            case .finishConnected(let peer):
                _ = state.withLock { finish(&$0) }
                if let session { delegate?.peerPickerController(self, didConnectPeer: peer, toSession: session) }
                return false
            case .finishCancelled:
                _ = state.withLock { finish(&$0) }
                delegate?.peerPickerControllerDidCancel(self)
                return false
            }
        }
        return true
    }
}
