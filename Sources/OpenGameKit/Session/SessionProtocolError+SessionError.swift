import OpenGameKitSessionWire

extension SessionProtocolError {
    /// The error a session reports when a connection to `peerName` ends because of this.
    func sessionError(peerName: String) -> GKSessionError {
        switch self {
        case .notAHandshake, .incompatibleVersion:
            GKSessionError(
                .notSupported, "\(peerName) speaks another version of the session protocol (encrypted sessions need OpenGameKit's version 2 on both sides).")
        case .authenticationFailed:
            GKSessionError(
                .authenticationFailed,
                "\(peerName) could not be authenticated: the two sessions use different passphrases (or only one has one), or the data was altered on the way."
            )
        default:
            GKSessionError(.communicationsFailure, "\(peerName) sent invalid data.")
        }
    }
}
