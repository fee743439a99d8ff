import GameCenterProtocol

/// Every failure of the SDK: a code a game can switch on, and a message saying what was wrong.
///
/// Errors from the server carry the server's message. Some loads fail with data still worth having — for
/// example ``GKPlayer/loadPlayers(forIdentifiers:in:)`` when some ids name no player — and then the error
/// carries it: read it with ``partialResult(as:)``.
public struct GKError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure, with the raw values of Apple's `GKErrorCode`.
    public enum Code: Int, Sendable {
        case unknown = 1, cancelled, communicationsFailure, userDenied, invalidCredentials,
            notAuthenticated, authenticationInProgress, invalidPlayer, scoreNotSet,
            parentalControlsBlocked, playerStatusExceedsMaximumLength, playerStatusInvalid,
            matchRequestInvalid, underage, gameUnrecognized, notSupported, invalidParameter, unexpectedConnection,
            challengeInvalid, turnBasedMatchDataTooLarge, turnBasedTooManySessions, turnBasedInvalidParticipant,
            turnBasedInvalidTurn, turnBasedInvalidState
    }

    /// What kind of failure this is.
    public var code: Code
    /// What was wrong and what is allowed.
    public var message: String
    /// The server's specific error identifier (`account.invalid_credentials`), when the server answered.
    public var serverCode: String?
    /// For throttled requests: seconds to wait before trying again.
    public var retryAfterSeconds: Int?
    /// Data that was loaded despite the error.
    public var partialResult: (any Sendable)?
    /// True when a report failed to reach the server but is kept in the device's outbox and will be re-sent
    /// automatically (do not report it again).
    public var queued = false

    /// Creates an error.
    public init(_ code: Code, _ message: String, serverCode: String? = nil, retryAfterSeconds: Int? = nil, partialResult: (any Sendable)? = nil) {
        self.code = code
        self.message = message
        self.serverCode = serverCode
        self.retryAfterSeconds = retryAfterSeconds
        self.partialResult = partialResult
    }

    /// The data loaded despite the error, if it is of type `T`.
    public func partialResult<T>(as type: T.Type) -> T? {
        partialResult as? T
    }

    /// Errors are equal when their code and message are.
    public static func == (lhs: GKError, rhs: GKError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public var description: String { "GKError.\(code): \(message)" }

    /// Whether the failure is the network's or the server's (worth trying again later), not the request's.
    var isTransient: Bool {
        code == .communicationsFailure || (serverCode?.hasPrefix("server.") ?? false)
    }

    init(_ body: ErrorBody) {
        self.init(Code(rawValue: body.gkCode) ?? .unknown, body.message, serverCode: body.code, retryAfterSeconds: body.retryAfterSeconds)
    }
}
