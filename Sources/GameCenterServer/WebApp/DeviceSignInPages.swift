import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// The page where a player confirms a game's sign-in (``DeviceSignInService``): `GET /device-sign-in/{id}` asks
/// (after the sign-in or sign-up form, which come back here), `POST` confirms, `POST …/decline` answers "Not now".
struct DeviceSignInPages: Sendable {
    /// The pages' path before the request id; the sign-in forms may return only here (``AccountPages/next(_:)``).
    static let pathPrefix = "/device-sign-in/"

    let signIns: DeviceSignInService
    let players: PlayerService
    let clock: ServerClock
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("device-sign-in/{requestID}", on: router, .anyone) { page in
            let requestID = page.context.parameters.get("requestID") ?? ""
            guard page.session != nil else {
                return PageRequest.redirect(to: "/sign-in?next=\(PageLinks.segment(Self.pathPrefix + requestID))")
            }
            return try await askPage(page, requestID: requestID)
        }
        responder.post("device-sign-in/{requestID}", on: router, .signedIn) { page in
            let requestID = page.context.parameters.get("requestID") ?? ""
            let session = try page.requireSession()
            let (_, game) = try await signIns.waiting(requestID)
            do {
                try await signIns.confirm(requestID, by: session)
            } catch let error as APIError where error.code == .requestInvalidParameter {
                return try await askPage(page, requestID: requestID, error: error)
            }
            return renderer.render(
                "device-sign-in",
                DeviceSignInPage(
                    chrome: PageChrome("Signed in", for: page), game: game.name, alias: try await alias(of: session), expires: "",
                    action: "", done: true, declined: false, error: nil))
        }
        responder.post("device-sign-in/{requestID}/decline", on: router, .signedIn) { page in
            let requestID = page.context.parameters.get("requestID") ?? ""
            let (_, game) = try await signIns.waiting(requestID)
            try await signIns.decline(requestID, by: page.requireSession())
            return renderer.render(
                "device-sign-in",
                DeviceSignInPage(
                    chrome: PageChrome("Not signed in", for: page), game: game.name, alias: "", expires: "", action: "", done: false,
                    declined: true, error: nil))
        }
    }

    private func askPage(_ page: PageRequest, requestID: String, error: APIError? = nil) async throws -> Response {
        let session = try page.requireSession()
        let (request, game) = try await signIns.waiting(requestID)
        let expires = PageDates.remaining(until: StoredTime.date(request.expiresAt), from: StoredTime.date(clock.nowMillis()))
        return renderer.render(
            "device-sign-in",
            DeviceSignInPage(
                chrome: PageChrome("Sign in \(game.name)", for: page), game: game.name, alias: try await alias(of: session),
                expires: expires, action: Self.pathPrefix + requestID, done: false, declined: false, error: error?.message),
            status: error?.status ?? .ok)
    }

    private func alias(of session: PageSession) async throws -> String {
        try await players.loadEveryPlayer([session.session.playerID], caller: session.session, device: session.device).first?.alias ?? ""
    }
}

/// The device sign-in page's content.
struct DeviceSignInPage {
    let chrome: PageChrome
    /// The game's name.
    let game: String
    /// The signed-in player's alias.
    let alias: String
    /// When the request ends (`in 4 minutes`).
    let expires: String
    /// The confirm form's action.
    let action: String
    /// Whether the player confirmed.
    let done: Bool
    /// Whether the player answered "Not now".
    let declined: Bool
    let error: String?
}
