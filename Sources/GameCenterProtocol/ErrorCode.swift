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
    case unexpectedConnection
    case challengeInvalid
    case turnBasedMatchDataTooLarge
    case turnBasedTooManySessions
    case turnBasedInvalidParticipant
    case turnBasedInvalidTurn
    case turnBasedInvalidState
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

/// Every specific error the server answers with, by feature: the `code` of an ``ErrorBody``.
///
/// The server gives each one HTTP status and one ``ErrorCode`` (its error table); `docs/ERRORS.md` and
/// `openapi.yaml` list the same codes.
public enum WireErrorCode: String, Codable, Sendable, CaseIterable {
    // The request itself.
    case requestInvalidParameter = "request.invalid_parameter"
    case requestMalformedBody = "request.malformed_body"
    case requestBodyTooLarge = "request.body_too_large"
    case requestUnknownRoute = "request.unknown_route"
    case requestMethodNotAllowed = "request.method_not_allowed"
    case requestMalformed = "request.malformed"
    case requestHeadersTooLarge = "request.headers_too_large"
    case requestRejected = "request.rejected"
    case requestRateLimited = "request.rate_limited"
    // The server's state.
    case serverInternal = "server.internal"
    case serverTooManyConnections = "server.too_many_connections"
    case serverStorageUnavailable = "server.storage_unavailable"
    case serverNodeUnavailable = "server.node_unavailable"
    case serverReadOnly = "server.read_only"
    // Accounts and sessions.
    case accountInvalidName = "account.invalid_name"
    case accountInvalidPassword = "account.invalid_password"
    case accountInvalidAlias = "account.invalid_alias"
    case accountStatusTooLong = "account.status_too_long"
    case accountStatusInvalid = "account.status_invalid"
    case accountNameTaken = "account.name_taken"
    case accountAliasLookAlike = "account.alias_look_alike"
    case accountNotAuthenticated = "account.not_authenticated"
    case accountSessionRevoked = "account.session_revoked"
    case accountSessionExpired = "account.session_expired"
    case accountSessionOtherGame = "account.session_other_game"
    case accountInvalidCredentials = "account.invalid_credentials"
    case accountSignInThrottled = "account.sign_in_throttled"
    case accountAddressThrottled = "account.address_throttled"
    case accountNoSuchSession = "account.no_such_session"
    // Games.
    case gameMissing = "game.missing"
    case gameUnrecognized = "game.unrecognized"
    case gameClientKeyRejected = "game.client_key_rejected"
    // Players.
    case playerUnknown = "player.unknown"
    // Friends.
    case friendUnderage = "friend.underage"
    case friendRecipientUnderage = "friend.recipient_underage"
    case friendToSelf = "friend.to_self"
    case friendAlreadyFriends = "friend.already_friends"
    case friendRequestPending = "friend.request_pending"
    case friendRequestFromRecipient = "friend.request_from_recipient"
    case friendNoSuchRequest = "friend.no_such_request"
    case friendRequestAnswered = "friend.request_answered"
    case friendNotAFriend = "friend.not_a_friend"
    // Leaderboards.
    case leaderboardValueOutOfRange = "leaderboard.value_out_of_range"
    case leaderboardUnknownCategory = "leaderboard.unknown_category"
    case leaderboardAggregate = "leaderboard.aggregate"
    case leaderboardNotLocalPlayer = "leaderboard.not_local_player"
    case leaderboardInvalidRange = "leaderboard.invalid_range"
    case leaderboardNoOccurrence = "leaderboard.no_occurrence"
    case leaderboardNotATournament = "leaderboard.not_a_tournament"
    case leaderboardNotJoined = "leaderboard.not_joined"
    case leaderboardTournamentFull = "leaderboard.tournament_full"
    case leaderboardNoAttemptsLeft = "leaderboard.no_attempts_left"
    case leaderboardTournamentEnded = "leaderboard.tournament_ended"
    case leaderboardTournamentRunning = "leaderboard.tournament_running"
    case leaderboardServerOnly = "leaderboard.server_only"
    case leaderboardSignatureRequired = "leaderboard.signature_required"
    case leaderboardSignatureInvalid = "leaderboard.signature_invalid"
    case leaderboardCounterUsed = "leaderboard.counter_used"
    case leaderboardSubmissionUnknown = "leaderboard.submission_unknown"
    case leaderboardSubmissionDecided = "leaderboard.submission_decided"
    // Challenges.
    case challengeUnknownDefinition = "challenge.unknown_definition"
    case challengeInvalidRequest = "challenge.invalid_request"
    case challengeNotFound = "challenge.not_found"
    case challengeNotInvited = "challenge.not_invited"
    case challengeFull = "challenge.full"
    case challengeEnded = "challenge.ended"
    case challengeNotFriends = "challenge.not_friends"
    // Activities and party codes.
    case activityUnknownDefinition = "activity.unknown_definition"
    case activityInvalidRequest = "activity.invalid_request"
    case activityNotFound = "activity.not_found"
    case activityEnded = "activity.ended"
    case activityPartyNotFound = "activity.party_not_found"
    case activityPartyFull = "activity.party_full"
    case activityNotInParty = "activity.not_in_party"
    // Achievements.
    case achievementInvalidPercent = "achievement.invalid_percent"
    case achievementUnknown = "achievement.unknown"
    case achievementNoImage = "achievement.no_image"
    case achievementNotAFriend = "achievement.not_a_friend"
    // Matchmaking and invitations.
    case matchmakingInvalidRequest = "matchmaking.invalid_request"
    case matchmakingInviteSelf = "matchmaking.invite_self"
    case matchmakingNotFriends = "matchmaking.not_friends"
    case matchmakingNoSuchMatch = "matchmaking.no_such_match"
    case matchmakingMatchNotRunning = "matchmaking.match_not_running"
    case matchmakingNoSuchRequest = "matchmaking.no_such_request"
    case matchmakingRequestIDReused = "matchmaking.request_id_reused"
    case matchmakingAlreadyWaiting = "matchmaking.already_waiting"
    case matchmakingOffline = "matchmaking.offline"
    case matchmakingNoSuchInvitation = "matchmaking.no_such_invitation"
    case matchmakingInvitationClosed = "matchmaking.invitation_closed"
    case matchmakingNotHost = "matchmaking.not_host"
    case matchmakingAlreadyInMatch = "matchmaking.already_in_match"
    case matchmakingNoOpenSeats = "matchmaking.no_open_seats"
    case matchmakingUnknownQueue = "matchmaking.unknown_queue"
    case matchmakingInvalidProperties = "matchmaking.invalid_properties"
    // Turn-based matches.
    case turnNoSuchMatch = "turn.no_such_match"
    case turnInvalidRequest = "turn.invalid_request"
    case turnInvalidParticipant = "turn.invalid_participant"
    case turnNotYourTurn = "turn.not_your_turn"
    case turnStaleVersion = "turn.stale_version"
    case turnInvalidState = "turn.invalid_state"
    case turnExchangesNotMerged = "turn.exchanges_not_merged"
    case turnMatchDataTooLarge = "turn.match_data_too_large"
    case turnTooManyMatches = "turn.too_many_matches"
    case turnTooManyExchanges = "turn.too_many_exchanges"
    case turnNoSuchExchange = "turn.no_such_exchange"
    case turnReminderTooSoon = "turn.reminder_too_soon"
    // Saved games.
    case saveInvalidRequest = "save.invalid_request"
    case saveTooLarge = "save.too_large"
    case saveQuotaExceeded = "save.quota_exceeded"
    case saveTooMany = "save.too_many"
    case saveNoSuchSave = "save.no_such_save"
    case saveNoSuchUpload = "save.no_such_upload"
    case saveUploadIncomplete = "save.upload_incomplete"
    case saveChecksumMismatch = "save.checksum_mismatch"
    // The match relay.
    case relayHostedMatch = "relay.hosted_match"
    // Administration.
    case adminDisabled = "admin.disabled"
    case adminKeyRequired = "admin.key_required"
    case adminUnknownGame = "admin.unknown_game"
    case adminClockFixed = "admin.clock_fixed"
    // The studio's game servers (server keys).
    case keyRequired = "key.required"
    case keyInvalid = "key.invalid"
    case keyForbidden = "key.forbidden"
    case keyUnknown = "key.unknown"
    case keyIdempotencyKeyReused = "key.idempotency_key_reused"
    case webhookUnknown = "webhook.unknown"
    // The web app's pages.
    case webFormRejected = "web.form_rejected"
    case webLinkExpired = "web.link_expired"
    case accountDeviceSignInExpired = "account.device_sign_in_expired"
    case accountDeviceSignInDeclined = "account.device_sign_in_declined"
    // Players the studio banned, and the studio console.
    case accountBanned = "account.banned"
    case consoleRoleRequired = "console.role_required"
    case consoleInvalidUser = "console.invalid_user"
    case consoleUserExists = "console.user_exists"
    case consoleUserUnknown = "console.user_unknown"
}
