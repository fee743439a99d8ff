import ArgumentParser
import Foundation
import GameCenterServer

/// `gamecenter games check PATH`: validates manifests exactly as `serve` does; `gamecenter games
/// from-app-store-connect`: writes a manifest from App Store Connect's leaderboards and achievements.
struct GamesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "games", abstract: "Work with game manifests.", subcommands: [Check.self, FromAppStoreConnect.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check a manifest or a folder of manifests; exit 1 on the first broken rule.")

        @Argument(help: "A manifest file or a folder of *.yaml manifests.") var path: String

        func run() throws {
            do {
                for game in try ManifestLoader.loadGames(at: path) {
                    print(
                        "ok \(game.bundleID) (\(game.name)): \(game.leaderboards.count + game.aggregates.count) leaderboards, \(game.achievements.count) achievements"
                    )
                }
            } catch let error as ManifestError {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                throw ExitCode.failure
            }
        }
    }

    /// Writes a manifest from the JSON:API documents App Store Connect returns for a game's leaderboards and
    /// achievements, checks it as `serve` would, and lists on stderr what could not be carried.
    struct FromAppStoreConnect: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "from-app-store-connect", abstract: "Write a manifest from App Store Connect's leaderboards and achievements.",
            discussion: """
                Each file is one page of GET /v1/gameCenterDetails/{id}/gameCenterLeaderboards?include=localizations or \
                …/gameCenterAchievements?include=localizations, saved unchanged. See docs/MANIFEST.md, "From App Store Connect".
                """)

        @Option(name: .customLong("bundle-id"), help: "The game's bundle id.") var bundleID: String
        @Option(help: "The game's name.") var name: String
        @Option(help: "The manifest's default locale (default: the locale every item has, en-US first).") var defaultLocale: String?
        @Option(help: "The manifest file to write.") var output: String
        @Argument(help: "JSON files of leaderboards and achievements, as App Store Connect returns them.") var documents: [String]

        func validate() throws {
            if documents.isEmpty { throw ValidationError("give at least one App Store Connect document (leaderboards or achievements)") }
        }

        func run() throws {
            do {
                let inputs = try documents.map { path -> (name: String, data: Data) in
                    guard let data = FileManager.default.contents(atPath: path) else {
                        FileHandle.standardError.write(Data("\(path): cannot be read\n".utf8))
                        throw ExitCode.failure
                    }
                    return (path, data)
                }
                let conversion = try AppStoreConnectManifest.convert(documents: inputs, bundleID: bundleID, name: name, defaultLocale: defaultLocale)
                try Data(conversion.yaml.utf8).write(to: URL(fileURLWithPath: output))
                for note in conversion.notes { FileHandle.standardError.write(Data("note: \(note)\n".utf8)) }
                let game = try ManifestLoader.loadManifest(file: output)
                print("wrote \(output): \(game.leaderboards.count) leaderboards, \(game.achievements.count) achievements")
            } catch let error as ManifestError {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                throw ExitCode.failure
            }
        }
    }
}
