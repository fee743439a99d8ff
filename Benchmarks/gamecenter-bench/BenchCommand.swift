import ArgumentParser

/// `gamecenter-bench …`: end-to-end benchmarks, each against its anchor in the same run. Apart from `gamecenter`, so
/// that the serving binary links none of the clients a benchmark drives the server with.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gamecenter-bench", abstract: "Benchmarks of a Game Center server, each against its anchor in the same run.",
        subcommands: [
            APIBench.self, AchievementBench.self, LeaderboardBench.self, MatchmakingBench.self, RelayBench.self, LANBench.self, VoiceBench.self,
            RealtimeBench.self, ReportBench.self, AppBench.self, ClusterBench.self, TurnsBench.self, SavesBench.self, OccurrencesBench.self,
            RealtimeAnchor.self, CompareBench.self, WebhooksBench.self, SignedReportsBench.self, ExportBench.self,
        ]
    )
}
