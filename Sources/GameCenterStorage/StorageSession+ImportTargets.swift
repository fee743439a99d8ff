extension StorageSession {
    /// The largest score id stored (0 when there is none): an importer numbers the scores it converts after it, so
    /// that they are later reports than every score already here and keep no one's id.
    public func largestScoreID() async throws -> Int64 {
        try await sql.raw("SELECT CAST(COALESCE(MAX(score_id), 0) AS BIGINT) AS largest FROM scores").first()?.int("largest") ?? 0
    }

    /// The players who have a best score on `category` of the game in `environment`: an importer run again leaves
    /// their scores out, so that running it twice reports each score once.
    public func playersWithBestScores(bundleID: String, environment: String, category: String) async throws -> Set<String> {
        let rows = try await sql.raw(
            """
            SELECT player_id FROM best_scores
            WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND category = \(bind: category)
            """
        ).all()
        return Set(try rows.map { try $0.decode(column: "player_id", as: String.self) })
    }
}
