import ArgumentParser

/// `gamecenter`: run and administer an OpenGameKit Game Center server.
@main
struct GameCenterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gamecenter",
        abstract: "OpenGameKit Game Center: a self-hosted service for Swift games.",
        subcommands: [
            ServeCommand.self, MigrateCommand.self, GamesCommand.self, MatchmakingCommand.self, KeysCommand.self, WebhooksCommand.self, ExportCommand.self,
            ImportCommand.self, ConsoleCommand.self,
        ]
    )
}
