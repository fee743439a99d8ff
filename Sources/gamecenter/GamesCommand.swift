import ArgumentParser
import Foundation
import GameCenterServer

/// `gamecenter games check PATH`: validates manifests exactly as `serve` does.
struct GamesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "games", abstract: "Work with game manifests.", subcommands: [Check.self]
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
}
