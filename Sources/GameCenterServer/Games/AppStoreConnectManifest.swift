import Foundation
import GameCenterProtocol

/// Writes a game's manifest from App Store Connect's definitions of its leaderboards and achievements: the JSON:API
/// documents `GET /v1/gameCenterDetails/{id}/gameCenterLeaderboards?include=localizations` and
/// `…/gameCenterAchievements?include=localizations` return, read unchanged (a page per document).
///
/// What maps is carried: ids, titles and descriptions per locale, formats and suffixes, sort order, score range,
/// recurrence, points and visibility. What cannot be is listed in ``Conversion/notes`` (archived items, a most-recent
/// submission type, per-locale formatter overrides, images, …). The result is meant to pass `gamecenter games check`.
public enum AppStoreConnectManifest {
    /// A manifest and what could not be carried into it.
    public struct Conversion: Sendable {
        /// The manifest, as YAML.
        public var yaml: String
        /// One line per thing not carried, or carried with a change.
        public var notes: [String]
    }

    /// Converts `documents` (each one page of leaderboards or achievements, named by its file for errors) into the
    /// manifest of `bundleID` called `name`. The default locale is `defaultLocale`, else the locale every item has
    /// (`en-US` or `en` first), else the most common one.
    public static func convert(
        documents: [(name: String, data: Data)], bundleID: String, name: String, defaultLocale: String? = nil
    ) throws -> Conversion {
        var leaderboards: [Item] = []
        var achievements: [Item] = []
        for (file, data) in documents {
            let document: Document
            do {
                document = try JSONDecoder().decode(Document.self, from: data)
            } catch {
                throw ManifestError(file: file, field: "", rule: "is not an App Store Connect JSON:API document: \(error)")
            }
            let included = Dictionary((document.included ?? []).map { ("\($0.type)/\($0.id)", $0) }, uniquingKeysWith: { first, _ in first })
            for resource in document.data {
                let localizations = (resource.relationships?.localizations?.data ?? []).compactMap { included["\($0.type)/\($0.id)"]?.attributes }
                let item = Item(attributes: resource.attributes ?? Attributes(), localizations: localizations)
                switch resource.type {
                case "gameCenterLeaderboards": leaderboards.append(item)
                case "gameCenterAchievements": achievements.append(item)
                default:
                    throw ManifestError(
                        file: file, field: "data", rule: "holds '\(resource.type)'; expected gameCenterLeaderboards or gameCenterAchievements")
                }
            }
        }
        var writer = Writer(bundleID: bundleID, name: name)
        let locale = defaultLocale ?? Self.defaultLocale(of: leaderboards + achievements)
        writer.write(leaderboards: leaderboards, achievements: achievements, defaultLocale: locale)
        return Conversion(yaml: writer.lines.joined(separator: "\n") + "\n", notes: writer.notes)
    }

    /// The locale every item has (`en-US`, then `en`, then the first by name), else the most common, else `en`.
    private static func defaultLocale(of items: [Item]) -> String {
        var counts: [String: Int] = [:]
        for item in items {
            for locale in Set(item.localizations.compactMap(\.locale)) { counts[locale, default: 0] += 1 }
        }
        let preference = ["en-US", "en", "en-GB"]
        return counts.sorted {
            if $0.value != $1.value { return $0.value > $1.value }
            let (left, right) = (preference.firstIndex(of: $0.key) ?? preference.count, preference.firstIndex(of: $1.key) ?? preference.count)
            return left != right ? left < right : $0.key < $1.key
        }.first?.key ?? "en"
    }

    /// A leaderboard or achievement with its localizations.
    private struct Item {
        var attributes: Attributes
        var localizations: [Attributes]
    }

    /// Builds the YAML line by line, with the notes.
    private struct Writer {
        var lines: [String]
        var notes: [String] = []

        init(bundleID: String, name: String) {
            lines = [
                "# Written by gamecenter games from-app-store-connect.", "bundleID: \(AppStoreConnectManifest.quoted(bundleID))",
                "name: \(AppStoreConnectManifest.quoted(name))",
            ]
        }

        mutating func write(leaderboards: [Item], achievements: [Item], defaultLocale: String) {
            lines.append("defaultLocale: \(AppStoreConnectManifest.quoted(defaultLocale))")
            let boards = carried(leaderboards, kind: "leaderboard")
            if !boards.isEmpty { lines.append("leaderboards:") }
            for (index, board) in boards.enumerated() { leaderboard(board, isDefault: index == 0, defaultLocale: defaultLocale) }
            if boards.count > Limits.maximumLeaderboardsPerGame {
                notes.append(
                    "\(boards.count) leaderboards: a game has at most \(Limits.maximumLeaderboardsPerGame) outside leaderboard sets; add leaderboardSets by hand"
                )
            }
            let kept = carried(achievements, kind: "achievement")
            if !kept.isEmpty { lines.append("achievements:") }
            for achievement in kept { self.achievement(achievement, defaultLocale: defaultLocale) }
            if !kept.isEmpty { notes.append("achievement images are not in these documents: add image: to each achievement by hand") }
            let points = kept.reduce(0) { $0 + Self.points(of: $1) }
            if points > Limits.maximumAchievementPointsPerGame {
                notes.append("achievements worth \(points) points: a game has at most \(Limits.maximumAchievementPointsPerGame); lower some by hand")
            }
        }

        /// The items that are not archived and have a usable id; a note for each other one.
        private mutating func carried(_ items: [Item], kind: String) -> [Item] {
            items.filter { item in
                let id = item.attributes.vendorIdentifier ?? ""
                if item.attributes.archived == true {
                    notes.append("\(kind) '\(id)': archived, not carried")
                    return false
                }
                guard id.wholeMatch(of: ManifestChecker.identifierPattern) != nil else {
                    notes.append("\(kind) '\(id)': not an identifier here (letters, digits, '.', '_', '-', up to 100), not carried")
                    return false
                }
                return true
            }
        }

        private mutating func leaderboard(_ item: Item, isDefault: Bool, defaultLocale: String) {
            let attributes = item.attributes
            let id = attributes.vendorIdentifier ?? ""
            lines.append("  - category: \(AppStoreConnectManifest.quoted(id))")
            if isDefault { lines.append("    default: true") }
            lines.append("    title: \(texts(item, \.name, kind: "leaderboard", field: "title", defaultLocale: defaultLocale, limit: 100))")
            if item.localizations.contains(where: { !($0.description ?? "").isEmpty }) {
                lines.append(
                    "    description: \(texts(item, \.description, kind: "leaderboard", field: "description", defaultLocale: defaultLocale, limit: 500))")
            }
            let formatter = attributes.defaultFormatter ?? item.localizations.compactMap(\.formatterOverride).first ?? "INTEGER"
            let (format, currency) = self.format(formatter, board: id)
            lines.append("    format: \(format.rawValue)")
            if let currency { lines.append("    currency: \(currency)") }
            for localization in item.localizations {
                if let override = localization.formatterOverride, override != formatter {
                    notes.append("leaderboard '\(id)': formatter \(override) of \(localization.locale ?? "a locale") not carried (one format per board here)")
                }
            }
            suffix(item)
            lines.append("    order: \(attributes.scoreSortType == "ASC" ? ScoreOrder.ascending.rawValue : ScoreOrder.descending.rawValue)")
            if let start = attributes.scoreRangeStart?.value, let end = attributes.scoreRangeEnd?.value {
                lines.append("    minValue: \(min(start, end))")
                lines.append("    maxValue: \(max(start, end))")
            }
            if attributes.visibility == "HIDE_FOR_ALL" { lines.append("    hidden: true") }
            if attributes.submissionType == "MOST_RECENT_SCORE" {
                notes.append("leaderboard '\(id)': submission type MOST_RECENT_SCORE not carried (boards here keep each player's best)")
            }
            recurrence(attributes, board: id)
        }

        /// A format of ours for Apple's formatter, with the currency of a money format.
        private mutating func format(_ formatter: String, board: String) -> (ScoreFormat, String?) {
            let plain: [String: ScoreFormat] = [
                "INTEGER": .integer, "DECIMAL_POINT_1_PLACE": .fixedPoint1, "DECIMAL_POINT_2_PLACE": .fixedPoint2,
                "DECIMAL_POINT_3_PLACE": .fixedPoint3, "ELAPSED_TIME_CENTISECOND": .elapsedHundredth, "ELAPSED_TIME_MINUTE": .elapsedMinute,
                "ELAPSED_TIME_SECOND": .elapsedSecond,
            ]
            if let format = plain[formatter] { return (format, nil) }
            let currencies = ["POUND": "GBP", "DOLLAR": "USD", "EURO": "EUR", "FRANC": "CHF", "KRONER": "SEK", "YEN": "JPY"]
            let parts = formatter.split(separator: "_").map(String.init)
            if parts.count >= 2, parts[0] == "MONEY", let currency = currencies[parts[1]] {
                if parts[1] == "KRONER" {
                    notes.append("leaderboard '\(board)': Apple's MONEY_KRONER does not say which krone; written as SEK, change currency: if needed")
                }
                return (parts.last == "DECIMAL" ? .money2 : .moneyWhole, currency)
            }
            notes.append("leaderboard '\(board)': formatter \(formatter) has no equivalent here; written as integer")
            return (.integer, nil)
        }

        /// Apple's suffixes, `other` from the plural one and `one` from the singular one; a space goes before a suffix
        /// that has none, as Game Center shows it.
        private mutating func suffix(_ item: Item) {
            var entries: [String] = []
            for localization in item.localizations {
                guard let locale = localization.locale, let plural = localization.formatterSuffix, !plural.isEmpty else { continue }
                func spaced(_ text: String) -> String { text.first?.isWhitespace == true ? text : " " + text }
                var forms = ["other: \(AppStoreConnectManifest.quoted(spaced(plural)))"]
                if let singular = localization.formatterSuffixSingular, !singular.isEmpty {
                    forms.insert("one: \(AppStoreConnectManifest.quoted(spaced(singular)))", at: 0)
                }
                entries.append("\(AppStoreConnectManifest.quoted(locale)): { \(forms.joined(separator: ", ")) }")
            }
            if !entries.isEmpty { lines.append("    suffix: { \(entries.joined(separator: ", ")) }") }
        }

        /// Apple's recurrence (start, ISO 8601 duration, RRULE) as Apple's rule here, or a monthly calendar rule.
        private mutating func recurrence(_ attributes: Attributes, board: String) {
            guard let startText = attributes.recurrenceStartDate else { return }
            guard let start = Self.date(startText), let duration = attributes.recurrenceDuration.flatMap(Self.seconds),
                let rule = attributes.recurrenceRule.map(Self.rule)
            else {
                notes.append(
                    "leaderboard '\(board)': recurrence \(attributes.recurrenceDuration ?? "?") \(attributes.recurrenceRule ?? "?") not understood; written as a classic board"
                )
                return
            }
            let utc = Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!)
            let interval = Int(rule["INTERVAL"] ?? "1") ?? 1
            let unit: [String: Int] = ["MINUTELY": 60, "HOURLY": 3600, "DAILY": 86_400, "WEEKLY": 7 * 86_400]
            if let seconds = unit[rule["FREQ"] ?? ""] {
                let every = seconds * max(1, interval)
                guard (60...366 * 86_400).contains(duration), every >= duration, every <= 366 * 86_400 else {
                    notes.append("leaderboard '\(board)': a recurrence of \(duration) s every \(every) s is outside 60 s to a year; written as a classic board")
                    return
                }
                lines.append(
                    "    recurring: { start: \(AppStoreConnectManifest.quoted(start.formatted(utc))), durationSeconds: \(duration), intervalSeconds: \(every) }"
                )
                return
            }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let parts = calendar.dateComponents([.day, .hour, .minute], from: start)
            if rule["FREQ"] == "MONTHLY", interval == 1, let day = parts.day, day <= 28 {
                let at = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
                lines.append(
                    "    recurring: { every: month, day: \(day), at: \(AppStoreConnectManifest.quoted(at)), start: \(AppStoreConnectManifest.quoted(start.formatted(utc))) }"
                )
                notes.append(
                    "leaderboard '\(board)': monthly recurrence carried as every month on day \(day) at \(at) UTC; its duration (\(duration) s) is not")
                return
            }
            notes.append("leaderboard '\(board)': recurrence rule \(attributes.recurrenceRule ?? "") has no equivalent here; written as a classic board")
        }

        private mutating func achievement(_ item: Item, defaultLocale: String) {
            let attributes = item.attributes
            let id = attributes.vendorIdentifier ?? ""
            lines.append("  - identifier: \(AppStoreConnectManifest.quoted(id))")
            lines.append("    title: \(texts(item, \.name, kind: "achievement", field: "title", defaultLocale: defaultLocale, limit: 100))")
            lines.append(
                "    unachievedDescription: \(texts(item, \.beforeEarnedDescription, kind: "achievement", field: "unachievedDescription", defaultLocale: defaultLocale, limit: 500))"
            )
            lines.append(
                "    achievedDescription: \(texts(item, \.afterEarnedDescription, kind: "achievement", field: "achievedDescription", defaultLocale: defaultLocale, limit: 500))"
            )
            let carried = Self.points(of: item)
            if carried != attributes.points { notes.append("achievement '\(id)': \(attributes.points ?? 0) points written as \(carried) (1 to 100 here)") }
            lines.append("    points: \(carried)")
            if attributes.showBeforeEarned == false { lines.append("    hidden: true") }
            if attributes.repeatable == true { notes.append("achievement '\(id)': repeatable not carried (earned once here)") }
        }

        /// A text per locale; the default locale's is the reference name when Apple's documents have none.
        private mutating func texts(
            _ item: Item, _ keyPath: KeyPath<Attributes, String?>, kind: String, field name: String, defaultLocale: String, limit: Int
        ) -> String {
            var byLocale: [(String, String)] = []
            for localization in item.localizations {
                guard let locale = localization.locale, let text = localization[keyPath: keyPath], !text.isEmpty else { continue }
                guard locale.wholeMatch(of: ManifestChecker.localePattern) != nil else {
                    notes.append("\(kind) '\(item.attributes.vendorIdentifier ?? "")': locale '\(locale)' is not a locale identifier here, not carried")
                    continue
                }
                byLocale.append((locale, String(text.prefix(limit))))
            }
            if !byLocale.contains(where: { $0.0 == defaultLocale }) {
                let fallback = item.attributes.referenceName ?? item.attributes.vendorIdentifier ?? ""
                notes.append("\(kind) '\(item.attributes.vendorIdentifier ?? "")': no \(name) in \(defaultLocale); its reference name is used")
                byLocale.insert((defaultLocale, String(fallback.prefix(limit))), at: 0)
            }
            return "{ " + byLocale.map { "\(AppStoreConnectManifest.quoted($0.0)): \(AppStoreConnectManifest.quoted($0.1))" }.joined(separator: ", ") + " }"
        }

        /// An achievement's points, brought into the range a manifest allows.
        private static func points(of item: Item) -> Int {
            min(max(item.attributes.points ?? 0, Limits.achievementPointsRange.lowerBound), Limits.achievementPointsRange.upperBound)
        }

        /// An ISO 8601 time, with or without fractional seconds.
        private static func date(_ text: String) -> Date? {
            let formatter = ISO8601DateFormatter()
            if let date = formatter.date(from: text) { return date }
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.date(from: text)
        }

        /// Seconds of an ISO 8601 duration of weeks, days, hours, minutes and seconds (`P1D`, `PT12H`, `P1W`).
        static func seconds(_ duration: String) -> Int? {
            guard duration.hasPrefix("P") else { return nil }
            var (total, number, inTime) = (0, "", false)
            for character in duration.dropFirst() {
                if character.isNumber {
                    number.append(character)
                    continue
                }
                if character == "T" {
                    inTime = true
                    continue
                }
                let units: [Character: Int] = inTime ? ["H": 3600, "M": 60, "S": 1] : ["W": 7 * 86_400, "D": 86_400]
                guard let unit = units[character], let value = Int(number) else { return nil }
                total += value * unit
                number = ""
            }
            return number.isEmpty && total > 0 ? total : nil
        }

        /// An RRULE's parts (`FREQ=DAILY;INTERVAL=1`).
        static func rule(_ text: String) -> [String: String] {
            var parts: [String: String] = [:]
            for part in text.replacingOccurrences(of: "RRULE:", with: "").split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
                if pair.count == 2 { parts[pair[0].uppercased()] = pair[1].uppercased() }
            }
            return parts
        }
    }

    /// A YAML double-quoted scalar (JSON's string escapes are YAML's).
    private static func quoted(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return (try? encoder.encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }

    /// A JSON:API document: one resource or a page of them, with the included ones.
    private struct Document: Decodable {
        var data: [Resource]
        var included: [Resource]?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let page = try? container.decode([Resource].self, forKey: .data) {
                data = page
            } else {
                data = [try container.decode(Resource.self, forKey: .data)]
            }
            included = try container.decodeIfPresent([Resource].self, forKey: .included)
        }

        private enum CodingKeys: String, CodingKey { case data, included }
    }

    private struct Resource: Decodable {
        var type: String
        var id: String
        var attributes: Attributes?
        var relationships: Relationships?
    }

    private struct Relationships: Decodable {
        var localizations: Linkage?
    }

    private struct Linkage: Decodable {
        var data: [Identifier]?
    }

    private struct Identifier: Decodable {
        var type: String
        var id: String
    }

    /// The attributes of every resource read (leaderboards, achievements and their localizations); each uses some.
    private struct Attributes: Decodable {
        var referenceName: String?
        var vendorIdentifier: String?
        var archived: Bool?
        var defaultFormatter: String?
        var submissionType: String?
        var scoreSortType: String?
        var scoreRangeStart: Number?
        var scoreRangeEnd: Number?
        var recurrenceStartDate: String?
        var recurrenceDuration: String?
        var recurrenceRule: String?
        var visibility: String?
        var points: Int?
        var showBeforeEarned: Bool?
        var repeatable: Bool?
        var locale: String?
        var name: String?
        var description: String?
        var formatterOverride: String?
        var formatterSuffix: String?
        var formatterSuffixSingular: String?
        var beforeEarnedDescription: String?
        var afterEarnedDescription: String?
    }

    /// A 64-bit integer App Store Connect writes as a JSON number or a string (`"scoreRangeStart": "0"`).
    private struct Number: Decodable {
        var value: Int64?

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                value = number
            } else {
                value = (try? container.decode(String.self)).flatMap { Int64($0) }
            }
        }
    }
}
