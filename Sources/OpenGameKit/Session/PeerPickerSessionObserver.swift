/// Stands in as a session's delegate while a ``GKPeerPickerController`` is shown, forwarding what the picker
/// needs into its event stream.
final class PeerPickerSessionObserver: GKSessionDelegate {
    /// What the picker hears from the session.
    enum Event: Sendable {
        /// A peer's state changed.
        case state(String, GKPeerConnectionState)
        /// A peer asks to connect.
        case request(String)
        /// Our request failed.
        case failed(String, String)
    }

    private let sink: @Sendable (Event) -> Void

    /// Creates an observer that passes every event to `sink`.
    init(sink: @escaping @Sendable (Event) -> Void) {
        self.sink = sink
    }

    func session(_ session: GKSession, peer peerID: String, didChange state: GKPeerConnectionState) {
        sink(.state(peerID, state))
    }

    func session(_ session: GKSession, didReceiveConnectionRequestFromPeer peerID: String) {
        sink(.request(peerID))
    }

    func session(_ session: GKSession, connectionWithPeerFailed peerID: String, withError error: any Error) {
        sink(.failed(peerID, (error as? GKSessionError)?.message ?? "\(error)"))
    }
}
