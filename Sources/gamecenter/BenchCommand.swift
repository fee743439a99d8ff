import ArgumentParser

/// `gamecenter bench …`: benchmarks that measure a capability against its anchor in the same run.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Benchmarks, each against its anchor in the same run.", subcommands: [APIBench.self, AchievementBench.self, LeaderboardBench.self, MatchmakingBench.self, RelayBench.self, LANBench.self]
    )
}
