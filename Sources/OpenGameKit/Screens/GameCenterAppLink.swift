import Foundation
import GameCenterProtocol

/// Pages of the Game Center app (served by `gamecenter serve`) that the standard screens present: a single-use link
/// that signs the player's browser in, and the browser to open it in.
enum GameCenterAppLink {
    /// A link to the page `request` names, signed in as the device's player; it works once, within a minute. While
    /// the player has it open, `shown` hears each of its pages shown and `finished` when they press Done or close it.
    static func url(
        _ request: AppTicketRequest, in gameCenter: GKGameCenter,
        shown: @escaping @Sendable (ScreenPresentation) -> Void = { _ in }, finished: @escaping @Sendable () -> Void
    ) async throws -> URL {
        let ticket = try await gameCenter.authenticated(.post, "/v1/app-tickets", body: request, as: AppTicket.self)
        guard ticket.path.hasPrefix("/"), let url = URL(string: gameCenter.api.server.absoluteString.trimmingSuffix("/") + ticket.path) else {
            throw GKError(.unknown, "the server answered a link that is not a path: '\(ticket.path.prefix(100))'")
        }
        if let presentationID = ticket.presentationID {
            gameCenter.presentedScreens.follow(presentationID, shown: shown, finished: finished)
        }
        return url
    }

    /// Opens `url` in the player's browser: the command in `$BROWSER` when set (as `xdg-open` reads it), else
    /// `xdg-open` (Linux) or `open` (macOS).
    static func open(_ url: URL) throws {
        let browser = ProcessInfo.processInfo.environment["BROWSER"].flatMap { $0.split(separator: ":").first.map(String.init) }
        #if os(macOS)
        let command = browser ?? "open"
        #else
        let command = browser ?? "xdg-open"
        #endif
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command, url.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw GKError(
                .notSupported,
                "cannot start '\(command)' to open the Game Center app; show the link from presentationURL() in the game's own web view")
        }
    }
}
