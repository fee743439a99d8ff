/// The error codes every Game Center failure maps to, shared by the server and the SDK.
///
/// The raw values are those of the SDK's `GKError.Code`, so a code crosses the wire as a number.
public enum ErrorCode: Int, Codable, Sendable, CaseIterable {
    case unknown = 1
    case cancelled
    case communicationsFailure
    case userDenied
    case invalidCredentials
    case notAuthenticated
    case authenticationInProgress
    case invalidPlayer
    case scoreNotSet
    case parentalControlsBlocked
    case playerStatusExceedsMaximumLength
    case playerStatusInvalid
    case matchRequestInvalid
    case underage
    case gameUnrecognized
    case notSupported
    case invalidParameter
}

/// The JSON body of every error response: `{ "code": "account.invalid_credentials", "gkCode": 5, "message": "…" }`.
///
/// `code` is a stable, specific identifier; `gkCode` is the coarser ``ErrorCode``; `message` says what was
/// wrong and what is allowed, and never contains SQL, tokens or file paths.
public struct ErrorBody: Codable, Sendable, Equatable {
    /// The specific, dotted error identifier.
    public var code: String
    /// The `GKError.Code` raw value.
    public var gkCode: Int
    /// A human-readable explanation.
    public var message: String
    /// Seconds the caller should wait before retrying, when the error is a throttle.
    public var retryAfterSeconds: Int?

    /// Creates an error body.
    public init(code: String, gkCode: ErrorCode, message: String, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.gkCode = gkCode.rawValue
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }
}
