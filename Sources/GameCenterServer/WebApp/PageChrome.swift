import Mustache

/// What every page shows around its content: the title, the navigation, the sandbox badge, and the token of the
/// sign-out form.
struct PageChrome: Sendable, MustacheParent {
    /// The page's title (also its `<h1>`).
    let title: String
    /// Whether a player is signed in (navigation and sign-out shown).
    let signedIn: Bool
    /// Shown as a badge when the player signed in to the sandbox environment.
    let sandbox: Bool
    /// The CSRF token of the forms in the chrome.
    let csrf: String
    /// Which navigation item is current, if any.
    let isHome: Bool, isFriends: Bool, isInvitations: Bool, isTurns: Bool, isChallenges: Bool, isSaves: Bool, isAccount: Bool
    /// Whether the page is part of a screen a game presented (``ScreenPresentations``): it shows a Done button.
    var presented: Bool
    /// Whether the server is winding down: a notice says that nothing new is stored and data can be downloaded.
    var windingDown = false

    /// The navigation's items.
    enum Section {
        case home, friends, invitations, turns, challenges, saves, account
    }

    func child(named name: String) -> Any? {
        switch name {
        case "title": PageText(title)
        case "signedIn": signedIn
        case "sandbox": sandbox
        case "csrf": PageText(csrf)
        case "isHome": isHome
        case "isFriends": isFriends
        case "isInvitations": isInvitations
        case "isTurns": isTurns
        case "isChallenges": isChallenges
        case "isSaves": isSaves
        case "isAccount": isAccount
        case "presented": presented
        case "windingDown": windingDown
        default: nil
        }
    }
}

extension PageChrome {
    /// The chrome of a page titled `title` in navigation `section`, for `request`'s reader.
    init(_ title: String, section: Section? = nil, for request: PageRequest) {
        self.title = title
        self.signedIn = request.session != nil
        self.sandbox = request.session?.environment == .sandbox
        self.csrf = request.session?.csrfToken ?? request.signedOutFormToken
        self.isHome = section == .home
        self.isFriends = section == .friends
        self.isInvitations = section == .invitations
        self.isTurns = section == .turns
        self.isChallenges = section == .challenges
        self.isSaves = section == .saves
        self.isAccount = section == .account
        self.presented = request.session != nil && ScreenPresentations.presentationID(of: request.request) != nil
        self.windingDown = request.readOnly
    }
}
