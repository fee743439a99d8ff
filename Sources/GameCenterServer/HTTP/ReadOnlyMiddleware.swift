import HTTPTypes
import Hummingbird

/// Wind-down mode (``GameCenterApp/Configuration/readOnly``): refuses every write of devices and game servers with
/// `server.read_only`, but lets players sign in and out (to download their data) and the operator use the admin routes.
/// The web app's forms are checked by ``PageResponder`` (it answers with a page), with the same rule.
struct ReadOnlyMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.refuses(request) else { return try await next(request, context) }
        throw APIError.readOnly
    }

    /// The device routes that take a POST but store nothing a game keeps: signing in and out, and reads with a body.
    private static let allowedDevicePaths = [
        "/v1/sessions", "/v1/device-sign-ins", "/v1/leaderboards/query", "/v1/players/lookup", "/v1/identity-verification", "/v1/app-tickets",
    ]

    /// Whether a read-only server refuses `request`: a write that is not a sign-in or sign-out, a read with a body, or
    /// an admin's (the JSON API's paths; the web app's are its own).
    static func refuses(_ request: Request) -> Bool {
        guard ![.get, .head, .options].contains(request.method) else { return false }
        let path = request.uri.path
        if path.hasPrefix("/v1/") {
            return !allowedDevicePaths.contains { path == $0 || path.hasPrefix($0 + "/") }
        }
        return path.hasPrefix("/server/v1/")
    }

    /// Whether a read-only server refuses the web app's form at `path`: all but signing in and out, ending sessions,
    /// answering a device's sign-in and downloading one's data.
    static func refusesForm(path: String) -> Bool {
        !(["/sign-in", "/sign-out", "/sign-out-everywhere", "/account/data", "/account/sessions/revoke"].contains(path)
            || path.hasPrefix("/device-sign-in/"))
    }
}
