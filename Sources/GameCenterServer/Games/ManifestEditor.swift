import Foundation

/// Edits a game's manifest while the server runs: checks a new text by ``ManifestLoader``'s rules in the manifest's
/// own folder (so the images it names resolve), and writes it over the manifest and reloads every manifest
/// (``GameRegistry/reload()``), putting the previous text back when the reload refuses. For the studio console. A
/// reload tells the other nodes, which reload their own manifest folder (share it between the nodes, or deploy the same
/// files to each, for an edit to reach them all).
struct ManifestEditor: Sendable {
    let registry: GameRegistry
    let bus: any EventBus

    /// The text of `game`'s manifest file.
    func text(of game: Game) throws -> String {
        guard let data = FileManager.default.contents(atPath: game.manifestPath) else {
            throw ManifestError(file: Self.fileName(game), field: "", rule: "cannot be read")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Checks `text` as `game`'s manifest: every rule of a manifest, and the same bundle id. Throws the
    /// ``ManifestError`` of the first broken rule, naming the manifest's file name only.
    @discardableResult
    func check(_ text: String, for game: Game) throws -> Game {
        let folder = URL(fileURLWithPath: game.manifestPath).deletingLastPathComponent()
        // Not `.yaml`: a reload running meanwhile must not read the draft as a game.
        let draft = folder.appendingPathComponent(".\(UUID().uuidString).console-check")
        try Data(text.utf8).write(to: draft)
        defer { try? FileManager.default.removeItem(at: draft) }
        let checked: Game
        do {
            checked = try ManifestLoader.loadManifest(file: draft.path)
        } catch let error as ManifestError {
            throw ManifestError(file: Self.fileName(game), field: error.field, rule: error.rule)
        }
        guard checked.bundleID == game.bundleID else {
            throw ManifestError(
                file: Self.fileName(game), field: "bundleID", rule: "must stay '\(game.bundleID)' (a manifest for another game is a new file)")
        }
        return checked
    }

    /// Checks `text`, writes it over `game`'s manifest and reloads every manifest; answers the games now loaded.
    /// When the reload refuses (another manifest broke meanwhile), the previous text is put back.
    func replace(_ text: String, for game: Game) throws -> [Game] {
        try check(text, for: game)
        let previous = try self.text(of: game)
        let file = URL(fileURLWithPath: game.manifestPath)
        try Data(text.utf8).write(to: file, options: .atomic)
        let games: [Game]
        do {
            games = try registry.reload()
        } catch {
            try Data(previous.utf8).write(to: file, options: .atomic)
            throw error
        }
        bus.manifestsReloaded()
        return games
    }

    /// Re-reads every manifest (as SIGHUP does); on a broken rule the games stay as they were.
    func reload() throws -> [Game] {
        let games = try registry.reload()
        bus.manifestsReloaded()
        return games
    }

    private static func fileName(_ game: Game) -> String {
        URL(fileURLWithPath: game.manifestPath).lastPathComponent
    }
}
