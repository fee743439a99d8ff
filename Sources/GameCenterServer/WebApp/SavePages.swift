import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// The saves page: the player's saved games, per game — each save's current version (device, date, size), a
/// conflict's versions side by side with a button to keep one, the older versions kept with a button to restore one,
/// and deleting a save. The rules are ``SavedGameService``'s.
struct SavePages: Sendable {
    let saves: SavedGameService
    let registry: GameRegistry
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("saves", on: router, .signedIn) { page in try await savesPage(page) }
        responder.post("saves/restore", on: router, .signedIn) { page in
            let session = try page.requireSession()
            do {
                try await saves.restore(versionID: page.form["version"] ?? "", playerID: session.session.playerID)
            } catch let error as APIError {
                return try await savesPage(page, error: error)
            }
            return PageRequest.redirect(to: "/saves?done=restored")
        }
        responder.post("saves/delete", on: router, .signedIn) { page in
            let session = try page.requireSession()
            do {
                try await saves.delete(
                    name: page.form["name"] ?? "", bundleID: page.form["game"] ?? "", playerID: session.session.playerID,
                    environment: session.environment.rawValue)
            } catch let error as APIError {
                return try await savesPage(page, error: error)
            }
            return PageRequest.redirect(to: "/saves?done=deleted")
        }
    }

    private func savesPage(_ page: PageRequest, error: APIError? = nil) async throws -> Response {
        let session = try page.requireSession()
        let versions = try await saves.overview(playerID: session.session.playerID, environment: session.environment.rawValue)
        var view = SavesView(chrome: PageChrome("Saves", section: .saves, for: page), error: error?.message)
        for (bundleID, ofGame) in Dictionary(grouping: versions, by: \.bundleID).sorted(by: { $0.key < $1.key }) {
            let saves = Dictionary(grouping: ofGame, by: \.name).sorted { $0.key < $1.key }.map { name, versions in
                SavesView.Save(
                    game: bundleID, name: name, current: versions.filter(\.current).map(Self.version),
                    older: versions.filter { !$0.current }.reversed().map(Self.version))
            }
            view.games.append(SavesView.Game(name: registry.game(bundleID: bundleID)?.name ?? bundleID, saves: saves))
        }
        if error == nil {
            view.done =
                switch page.query("done") {
                case "restored": "Done. That version is the save's current one now; your devices load it next time."
                case "deleted": "Save deleted, with every version of it."
                default: nil
                }
        }
        return renderer.render("saves", view, status: error?.status ?? .ok)
    }

    static func version(_ record: SavedGameVersionRecord) -> SavesView.Version {
        let date = StoredTime.date(record.createdAt)
        return SavesView.Version(
            id: record.versionID, device: record.deviceName.isEmpty ? "a device" : record.deviceName, date: PageDates.minute(date),
            dateMachine: PageDates.machine(date), size: ByteCountFormatter.string(fromByteCount: record.size, countStyle: .binary))
    }
}

/// The saves page's content.
struct SavesView {
    /// One kept version.
    struct Version {
        let id: String
        let device: String
        let date: String, dateMachine: String
        /// In words ("2 MB").
        let size: String
    }

    /// One save: its current version (several: a conflict) and the older ones kept.
    struct Save {
        /// The game's bundle id (the delete form's field).
        let game: String
        let name: String
        let current: [Version]
        let older: [Version]
        /// Several current versions. (Stored: templates see stored properties only.)
        let conflicted: Bool
        let hasOlder: Bool

        init(game: String, name: String, current: [Version], older: [Version]) {
            self.game = game
            self.name = name
            self.current = current
            self.older = older
            conflicted = current.count > 1
            hasOlder = !older.isEmpty
        }
    }

    /// One game's saves.
    struct Game {
        let name: String
        let saves: [Save]
    }

    let chrome: PageChrome
    var games: [Game] = []
    let error: String?
    var done: String?

    init(chrome: PageChrome, error: String?) {
        self.chrome = chrome
        self.error = error
    }
}
