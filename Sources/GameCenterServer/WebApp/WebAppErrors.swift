import GameCenterProtocol

/// The web app's own errors: what only pages can get wrong, and friend errors told with aliases instead of the
/// player ids the JSON API names (players never see ids). Only ``formRejected`` and ``linkExpired`` have codes of
/// their own; the others are the API's codes with the words a page needs.
extension APIError {
    /// A link from a game to a page (``AppTicket``) was used before, expired, or outlived the game's session.
    static let linkExpired = APIError(
        .webLinkExpired, "this link from your game was already used or has expired; open the screen again from the game")

    /// A form came without the token of the page session (or of the signed-out forms) it was rendered for.
    static let formRejected = APIError(.webFormRejected, "this form expired or did not come from this site; reload the page and try again")

    /// No player of the environment has this account name or alias.
    static func noPlayerNamed(_ name: String) -> APIError {
        APIError(.playerUnknown, "no player has the account name or alias '\(shown(name))'; check the spelling (aliases must match exactly)")
    }

    /// Several players share the alias; the account name tells them apart.
    static func aliasShared(_ alias: String) -> APIError {
        APIError(
            .requestInvalidParameter,
            "several players use the alias '\(shown(alias))'; ask your friend for their account name and send the request to it")
    }

    /// A friend-request field was empty or too long.
    static let friendNameInvalid = APIError(.requestInvalidParameter, "enter your friend's account name or alias (at most 64 characters)")

    /// The two are friends already.
    static func alreadyFriends(alias: String) -> APIError {
        APIError(.friendAlreadyFriends, "you and \(shown(alias)) are already friends")
    }

    /// A request to this player is waiting for their answer.
    static func requestAlreadyPending(alias: String) -> APIError {
        APIError(.friendRequestPending, "your friend request to \(shown(alias)) is still waiting for an answer")
    }

    /// The recipient sent the caller a request first.
    static func requestFromRecipientPending(alias: String) -> APIError {
        APIError(.friendRequestFromRecipient, "\(shown(alias)) already sent you a friend request; accept it under Requests for you")
    }

    /// The recipient's account cannot receive requests.
    static func recipientCannotBefriend(alias: String) -> APIError {
        APIError(.friendRecipientUnderage, "\(shown(alias)) cannot receive friend requests")
    }

    /// The player to remove is not a friend (told without their id).
    static let notYourFriend = APIError(.friendNotAFriend, "that player is not your friend")

    /// The play-with-friends form was sent with no friend ticked.
    static let noFriendChosen = APIError(.requestInvalidParameter, "choose at least one friend to play with")

    /// A play-with-friends choice named a player who is not a friend (told without their id).
    static let playOnlyWithFriends = APIError(.matchmakingNotFriends, "you can play only with your friends; choose them from the list")

    /// A play-with-friends choice named a player who does not exist (told without their id).
    static let noSuchFriendToPlayWith = APIError(.playerUnknown, "a chosen player does not exist; choose your friends from the list")

    /// A query parameter of a page had a value it does not take.
    static func invalidPageParameter(_ name: String, allowed: String) -> APIError {
        APIError(.requestInvalidParameter, "'\(name)' must be \(allowed)")
    }

    private static func shown(_ text: String) -> String {
        text.count <= 64 ? text : String(text.prefix(64)) + "…"
    }
}
