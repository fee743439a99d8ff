import Foundation
import GameCenterStorage

/// The `leaderboards:` entries of a game's manifest for the boards a Nakama server defined: boards here are defined
/// in manifests, so `gamecenter import --nakama` prints them for the studio to add to the game's YAML.
enum NakamaManifestSnippet {
    /// YAML for `boards`, the first carried one marked as the game's default; tournaments and boards whose id is not
    /// a category are listed as comments saying why.
    static func yaml(_ boards: [NakamaLeaderboard], defaultLocale: String = "en") -> String {
        var lines = ["leaderboards:"]
        var hasDefault = false
        for board in boards {
            guard !board.isTournament, board.isValidCategory else {
                let why = board.isTournament ? "is a tournament; its records were not carried" : "is not a valid category; its records were not carried"
                lines.append("  # Nakama's \(quoted(board.id)) \(why)")
                continue
            }
            lines.append("  - category: \(board.id)")
            if !hasDefault {
                lines.append("    default: true                 # exactly one board of the game is the default")
                hasDefault = true
            }
            let title = board.title.isEmpty ? board.id : board.title
            lines.append("    title: { \(defaultLocale): \(quoted(String(title.prefix(100)))) }")
            if !board.description.isEmpty {
                lines.append("    description: { \(defaultLocale): \(quoted(String(board.description.prefix(500)))) }")
            }
            lines.append("    format: integer")
            lines.append("    order: \(board.ascending ? "ascending" : "descending")")
            if board.scoreOperator != "best" {
                lines.append("    # Nakama's operator was '\(board.scoreOperator)': boards here keep each player's best score")
            }
            if let schedule = board.resetSchedule {
                let fields = schedule.split(separator: " ").count
                lines.append(
                    fields == 5
                        ? "    recurring: { cron: \(quoted(schedule)) }   # Nakama's reset schedule (UTC); the running period's records were not carried"
                        : "    # Nakama's reset schedule \(quoted(schedule)) is not a five-field cron: add a recurring: block by hand")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A YAML double-quoted scalar (JSON's string escapes are YAML's).
    private static func quoted(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = (try? encoder.encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
