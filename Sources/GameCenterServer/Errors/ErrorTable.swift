import GameCenterProtocol
import HTTPTypes

/// The error table: the one place that gives every ``WireErrorCode`` its HTTP status and `GKError` code.
///
/// `docs/ERRORS.md` lists the same table for people; `ErrorTableTests` checks that the two agree.
extension WireErrorCode {
    /// The HTTP status a response with this code carries.
    var status: HTTPResponse.Status { answer.status }

    /// The `GKError.Code` the SDK reports for this code.
    var gkCode: ErrorCode { answer.gkCode }

    private var answer: (status: HTTPResponse.Status, gkCode: ErrorCode) {
        switch self {
        case .requestInvalidParameter: (.badRequest, .invalidParameter)
        case .requestMalformedBody: (.badRequest, .invalidParameter)
        case .requestBodyTooLarge: (.contentTooLarge, .invalidParameter)
        case .requestUnknownRoute: (.notFound, .notSupported)
        case .requestMethodNotAllowed: (.methodNotAllowed, .notSupported)
        case .requestMalformed: (.badRequest, .invalidParameter)
        case .requestHeadersTooLarge: (.requestHeaderFieldsTooLarge, .invalidParameter)
        case .requestRejected: (.badRequest, .invalidParameter)
        case .requestRateLimited: (.tooManyRequests, .communicationsFailure)
        case .serverInternal: (.internalServerError, .unknown)
        case .serverTooManyConnections: (.serviceUnavailable, .communicationsFailure)
        case .serverStorageUnavailable: (.serviceUnavailable, .communicationsFailure)
        case .serverNodeUnavailable: (.serviceUnavailable, .communicationsFailure)
        case .accountInvalidName: (.badRequest, .invalidParameter)
        case .accountInvalidPassword: (.badRequest, .invalidParameter)
        case .accountInvalidAlias: (.badRequest, .invalidParameter)
        case .accountStatusTooLong: (.badRequest, .playerStatusExceedsMaximumLength)
        case .accountStatusInvalid: (.badRequest, .playerStatusInvalid)
        case .accountNameTaken: (.conflict, .invalidParameter)
        case .accountAliasLookAlike: (.conflict, .invalidParameter)
        case .accountNotAuthenticated: (.unauthorized, .notAuthenticated)
        case .accountSessionRevoked: (.unauthorized, .notAuthenticated)
        case .accountSessionExpired: (.unauthorized, .notAuthenticated)
        case .accountSessionOtherGame: (.unauthorized, .notAuthenticated)
        case .accountInvalidCredentials: (.unauthorized, .invalidCredentials)
        case .accountSignInThrottled: (.tooManyRequests, .invalidCredentials)
        case .accountAddressThrottled: (.tooManyRequests, .invalidCredentials)
        case .accountNoSuchSession: (.notFound, .invalidParameter)
        case .gameMissing: (.badRequest, .gameUnrecognized)
        case .gameUnrecognized: (.notFound, .gameUnrecognized)
        case .gameClientKeyRejected: (.forbidden, .gameUnrecognized)
        case .playerUnknown: (.notFound, .invalidPlayer)
        case .friendUnderage: (.forbidden, .underage)
        case .friendRecipientUnderage: (.forbidden, .underage)
        case .friendToSelf: (.badRequest, .invalidParameter)
        case .friendAlreadyFriends: (.conflict, .invalidParameter)
        case .friendRequestPending: (.conflict, .invalidParameter)
        case .friendRequestFromRecipient: (.conflict, .invalidParameter)
        case .friendNoSuchRequest: (.notFound, .invalidParameter)
        case .friendRequestAnswered: (.conflict, .invalidParameter)
        case .friendNotAFriend: (.notFound, .invalidPlayer)
        case .leaderboardValueOutOfRange: (.badRequest, .invalidParameter)
        case .leaderboardUnknownCategory: (.notFound, .invalidParameter)
        case .leaderboardAggregate: (.badRequest, .invalidParameter)
        case .leaderboardNotLocalPlayer: (.forbidden, .invalidPlayer)
        case .leaderboardInvalidRange: (.badRequest, .invalidParameter)
        case .achievementInvalidPercent: (.badRequest, .invalidParameter)
        case .achievementUnknown: (.notFound, .invalidParameter)
        case .achievementNoImage: (.notFound, .invalidParameter)
        case .achievementNotAFriend: (.forbidden, .invalidPlayer)
        case .matchmakingInvalidRequest: (.badRequest, .matchRequestInvalid)
        case .matchmakingInviteSelf: (.badRequest, .invalidParameter)
        case .matchmakingNotFriends: (.forbidden, .invalidPlayer)
        case .matchmakingNoSuchMatch: (.notFound, .invalidParameter)
        case .matchmakingMatchNotRunning: (.conflict, .invalidParameter)
        case .matchmakingNoSuchRequest: (.notFound, .invalidParameter)
        case .matchmakingRequestIDReused: (.conflict, .invalidParameter)
        case .matchmakingAlreadyWaiting: (.conflict, .invalidParameter)
        case .matchmakingOffline: (.conflict, .communicationsFailure)
        case .matchmakingNoSuchInvitation: (.notFound, .invalidParameter)
        case .matchmakingInvitationClosed: (.gone, .invalidParameter)
        case .matchmakingNotHost: (.forbidden, .invalidParameter)
        case .matchmakingAlreadyInMatch: (.conflict, .invalidPlayer)
        case .matchmakingNoOpenSeats: (.conflict, .matchRequestInvalid)
        case .relayHostedMatch: (.badRequest, .invalidParameter)
        case .adminDisabled: (.forbidden, .notSupported)
        case .adminKeyRequired: (.unauthorized, .notAuthenticated)
        case .adminUnknownGame: (.notFound, .gameUnrecognized)
        case .adminClockFixed: (.forbidden, .notSupported)
        case .webFormRejected: (.forbidden, .notAuthenticated)
        case .webLinkExpired: (.gone, .notAuthenticated)
        case .accountDeviceSignInExpired: (.gone, .notAuthenticated)
        case .accountDeviceSignInDeclined: (.forbidden, .cancelled)
        }
    }
}
