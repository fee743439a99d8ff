/// Something ``PeerPickerModel`` asks the picker to do.
enum PeerPickerEffect: Equatable, Sendable {
    /// Write a line of text.
    case show(String)
    /// The user chose nearby play from the connection-type menu: report it.
    case chooseNearby
    /// Start nearby play: get a session and make it available.
    case startNearby
    /// The user chose online play: report it and dismiss.
    case chooseOnline
    /// Ask a peer to connect.
    case connect(String)
    /// Withdraw the request to a peer.
    case cancelConnect(String)
    /// Accept a peer's request.
    case accept(String)
    /// Decline a peer's request.
    case deny(String)
    /// A peer is connected: dismiss and report it.
    case finishConnected(String)
    /// The user cancelled: dismiss and report it.
    case finishCancelled
}
