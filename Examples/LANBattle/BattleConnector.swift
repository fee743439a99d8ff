import Foundation
import OpenGameKit
import Synchronization

/// Finds an opponent with the peer picker and then carries the battle messages: picker delegate, session
/// delegate, and (with `--auto`) the autopilot that answers the picker's questions.
final class BattleConnector: GKPeerPickerControllerDelegate, GKSessionDelegate, Sendable {
    /// What the battle loop hears.
    enum Event: Sendable {
        /// The picker connected us to this peer.
        case connected(String)
        /// The user cancelled the picker.
        case cancelled
        /// A message from a connected peer.
        case message(Data, from: String)
        /// The opponent left.
        case disconnected(String)
    }

    let session: GKSession
    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let autoInput: AsyncStream<String>.Continuation
    private let autoLines: AsyncStream<String>
    private let picked = Mutex(false)

    /// Carries the battle over `session`; what is voice chat's goes to `voice`.
    init(session: GKSession, voice: BattleVoice?) {
        self.session = session
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
        (autoLines, autoInput) = AsyncStream.makeStream(of: String.self)
        let continuation = self.continuation
        session.setDataReceiveHandler { data, peer, _ in
            if let voice, voice.receive(data, from: peer) { return }
            continuation.yield(.message(data, from: peer))
        }
    }

    /// A picker reading the terminal, or (auto) one answered by the autopilot.
    func makePicker(auto: Bool) -> GKPeerPickerController {
        let picker: GKPeerPickerController
        if auto {
            picker = GKPeerPickerController(input: autoLines) { [self] text in
                FileHandle.standardOutput.write(Data((text + "\n").utf8))
                autopilot(text)
            }
        } else {
            picker = GKPeerPickerController()
        }
        picker.delegate = self
        return picker
    }

    /// Picks the first player once, and accepts every request.
    private func autopilot(_ text: String) {
        if text.contains("Accept? [y/n]") {
            autoInput.yield("y")
        } else if text.hasPrefix("Could not connect") {
            picked.withLock { $0 = false }
        } else if text.hasPrefix("Nearby players:") {
            let first = picked.withLock { picked in
                defer { picked = true }
                return !picked
            }
            if first { autoInput.yield("1") }
        }
    }

    func peerPickerController(_ picker: GKPeerPickerController, sessionFor connectionType: GKPeerPickerConnectionType) -> GKSession? {
        session
    }

    func peerPickerController(_ picker: GKPeerPickerController, didConnectPeer peerID: String, toSession session: GKSession) {
        continuation.yield(.connected(peerID))
    }

    func peerPickerControllerDidCancel(_ picker: GKPeerPickerController) {
        continuation.yield(.cancelled)
    }

    func session(_ session: GKSession, peer peerID: String, didChange state: GKPeerConnectionState) {
        if state == .disconnected { continuation.yield(.disconnected(peerID)) }
    }
}
