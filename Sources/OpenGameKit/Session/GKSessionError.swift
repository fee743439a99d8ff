/// An error from ``GKSession`` or ``GKPeerPickerController``: a ``Code`` and a human-readable message.
///
/// Like Apple's `GKSessionErrorDomain`, session errors are their own type, separate from Game Center's
/// ``GKError``: the shared cases carry the same names, and the session-specific ones (`peerNotFound`,
/// `declined`, `timedOut`, `notConnected`, `dataTooBig`, `sessionFull`) are Apple's session error codes.
public struct GKSessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// An argument was invalid (bad session id, unknown peer, no pending request…).
        case invalidParameter
        /// The operation is not supported.
        case notSupported
        /// The operation was cancelled.
        case cancelled
        /// The network failed: a peer could not be reached, or a connection broke.
        case communicationsFailure
        /// The peer is not known to this session.
        case peerNotFound
        /// The other peer declined the connection.
        case declined
        /// The other peer did not answer in time.
        case timedOut
        /// A peer the data was sent to is not connected.
        case notConnected
        /// The message is larger than the mode allows (87 KB reliable, 1000 bytes unreliable).
        case dataTooBig
        /// A session already has the maximum number of connected peers (16).
        case sessionFull
        /// The connection's encryption could not be set up or checked: the peer uses another passphrase (or only one
        /// side has one), or someone altered the data on the way. OpenGameKit's own; Apple's sessions have no such
        /// error.
        case authenticationFailed
    }

    /// What went wrong.
    public var code: Code
    /// A sentence describing the problem.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
