/// Receives a ``GKPeerPickerController``'s results. Every method has a default implementation.
public protocol GKPeerPickerControllerDelegate: AnyObject, Sendable {
    /// The user chose a connection type from the picker's menu (shown only when ``GKPeerPickerController/connectionTypesMask``
    /// offers both). For `.online` the picker then dismisses itself and the app takes over.
    func peerPickerController(_ picker: GKPeerPickerController, didSelect connectionType: GKPeerPickerConnectionType)
    /// The session to use for `connectionType`; `nil` (the default) lets the picker create a peer-mode session
    /// with the default session id and display name.
    func peerPickerController(_ picker: GKPeerPickerController, sessionFor connectionType: GKPeerPickerConnectionType) -> GKSession?
    /// A peer connected to `session`; the picker has dismissed itself and given the session back (set its delegate now).
    func peerPickerController(_ picker: GKPeerPickerController, didConnectPeer peerID: String, toSession session: GKSession)
    /// The user cancelled; the picker has dismissed itself.
    func peerPickerControllerDidCancel(_ picker: GKPeerPickerController)
}

extension GKPeerPickerControllerDelegate {
    /// Does nothing.
    public func peerPickerController(_ picker: GKPeerPickerController, didSelect connectionType: GKPeerPickerConnectionType) {}
    /// Returns `nil`: the picker creates its own session.
    public func peerPickerController(_ picker: GKPeerPickerController, sessionFor connectionType: GKPeerPickerConnectionType) -> GKSession? { nil }
    /// Does nothing.
    public func peerPickerController(_ picker: GKPeerPickerController, didConnectPeer peerID: String, toSession session: GKSession) {}
    /// Does nothing.
    public func peerPickerControllerDidCancel(_ picker: GKPeerPickerController) {}
}
