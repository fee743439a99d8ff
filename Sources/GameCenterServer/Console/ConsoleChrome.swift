import Mustache

/// What every console page shows around its content: the title, the navigation, who is signed in with what role,
/// and the sign-out form's token.
struct ConsoleChrome: Sendable, MustacheParent {
    /// The navigation's sections.
    enum Section: String, CaseIterable {
        case players, games, live, audit, keys, webhooks, users
    }

    /// The page's title (also its `<h1>`).
    let title: String
    /// The signed-in user's name and role; nil on the sign-in page.
    let user: String?, role: String?
    /// The CSRF token of the forms in the chrome.
    let csrf: String
    /// The current section, if any.
    let section: Section?

    init(_ title: String, section: Section? = nil, for page: ConsoleRequest) {
        self.title = title
        self.user = page.session?.userName
        self.role = page.session?.role.rawValue
        self.csrf = page.session?.csrfToken ?? page.signedOutFormToken
        self.section = section
    }

    func child(named name: String) -> Any? {
        switch name {
        case "title": PageText(title)
        case "signedIn": user != nil
        case "user": user.map(PageText.init)
        case "role": role.map(PageText.init)
        case "csrf": PageText(csrf)
        case "nav":
            user == nil
                ? nil
                : Section.allCases.map { section in
                    ["href": PageText("/console/\(section.rawValue)"), "label": PageText(section.rawValue.capitalized), "current": section == self.section]
                        as [String: Any]
                }
        default: nil
        }
    }
}

/// One tab of a console page's row of views (a window, a state): where it leads and whether it is the one shown.
struct ConsoleTab {
    let link: String, title: String
    let current: Bool
}
