import Foundation
import GameCenterProtocol
import Yams

/// Reads and checks game manifests (`MANIFEST.md`): all of a manifest's rules, or no game at all.
public enum ManifestLoader {
    /// Loads one manifest file, or every `*.yaml`/`*.yml` file of a folder. Any broken rule in any file
    /// throws, naming the file, field and rule; two files with one bundle id are refused too.
    public static func loadGames(at path: String) throws -> [Game] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ManifestError(file: path, field: "", rule: "no such file or folder")
        }
        let files: [String]
        if isDirectory.boolValue {
            files = try FileManager.default.contentsOfDirectory(atPath: path)
                .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
                .sorted()
                .map { (path as NSString).appendingPathComponent($0) }
        } else {
            files = [path]
        }
        var games: [Game] = []
        var seen: [String: String] = [:]
        for file in files {
            let game = try loadManifest(file: file)
            if let other = seen[game.bundleID] {
                throw ManifestError(file: file, field: "bundleID", rule: "'\(game.bundleID)' is already configured by \(other); bundle ids are unique")
            }
            seen[game.bundleID] = file
            games.append(game)
        }
        return games
    }

    /// Loads and checks one manifest file.
    public static func loadManifest(file: String) throws -> Game {
        guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
            throw ManifestError(file: file, field: "", rule: "cannot be read as UTF-8 text")
        }
        let node: Node
        do {
            guard let composed = try Yams.compose(yaml: text) else {
                throw ManifestError(file: file, field: "", rule: "is empty; a manifest needs at least bundleID and name")
            }
            node = composed
        } catch let error as ManifestError {
            throw error
        } catch {
            throw ManifestError(file: file, field: "", rule: "is not valid YAML: \(error)")
        }
        let baseDirectory = URL(fileURLWithPath: file).deletingLastPathComponent()
        return try ManifestChecker(root: ManifestNode(node: node, path: "", file: file), baseDirectory: baseDirectory).game()
    }
}

/// Applies the manifest rules to one parsed file.
struct ManifestChecker {
    let root: ManifestNode
    let baseDirectory: URL

    static var identifierPattern: Regex<Substring> { /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/ }
    static var bundleIDPattern: Regex<(Substring, Substring)> { /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/ }
    static var localePattern: Regex<(Substring, Substring?)> { /^[a-z]{2,3}([_-][A-Za-z0-9]{2,8})*$/ }
    static var currencyPattern: Regex<Substring> { /^[A-Z]{3}$/ }

    func game() throws -> Game {
        let fields = try root.mapping(allowed: [
            "bundleID", "name", "clientKey", "defaultLocale", "leaderboards", "aggregates", "leaderboardSets", "achievements", "matchmaking",
            "turnBased", "savedGames", "challenges", "activities",
        ])
        let bundleID = try required(fields, "bundleID", in: root).string()
        guard bundleID.count <= 155, bundleID.wholeMatch(of: Self.bundleIDPattern) != nil else {
            throw fields["bundleID"]!.fail("'\(bundleID)' is not a reverse-DNS bundle id such as com.example.game")
        }
        let name = try required(fields, "name", in: root).string().trimmingCharacters(in: .whitespaces)
        guard (1...100).contains(name.count) else { throw fields["name"]!.fail("must be 1 to 100 characters") }
        let clientKey = try fields["clientKey"].map { node -> String in
            let key = try node.string()
            guard (8...200).contains(key.count) else { throw node.fail("must be 8 to 200 characters") }
            return key
        }
        let defaultLocale = try fields["defaultLocale"].map { try locale($0) } ?? "en"

        let leaderboards = try (fields["leaderboards"]?.sequence() ?? []).map { try leaderboard($0, defaultLocale: defaultLocale) }
        let aggregates = try (fields["aggregates"]?.sequence() ?? []).map { try aggregate($0, defaultLocale: defaultLocale) }
        let sets = try (fields["leaderboardSets"]?.sequence() ?? []).map { try leaderboardSet($0, defaultLocale: defaultLocale) }
        try checkLeaderboardRules(leaderboards, aggregates, sets: sets, fields: fields)

        let achievements = try (fields["achievements"]?.sequence() ?? []).map { try achievement($0, defaultLocale: defaultLocale) }
        try checkAchievementRules(achievements, fields: fields)

        var game = Game(
            bundleID: bundleID, name: name, clientKey: clientKey, defaultLocale: defaultLocale,
            leaderboards: leaderboards, aggregates: aggregates, leaderboardSets: sets, achievements: achievements, manifestPath: root.file
        )
        if let node = fields["matchmaking"] {
            game.matchmaking = try matchmaking(node)
            let classic = game.matchmaking.queues.values.filter { $0.classicMatchmakingBundleIds.contains(bundleID) }.map(\.referenceName).sorted()
            guard classic.count <= 1 else {
                throw node.fail(
                    "queues \(classic.joined(separator: " and ")) both list \(bundleID) in classicMatchmakingBundleIds; its classic requests can wait in one queue only"
                )
            }
            game.matchmaking.classicQueue = classic.first
        }
        if let node = fields["turnBased"] { game.turnBased = try turnBased(node) }
        if let node = fields["savedGames"] { game.savedGames = try savedGames(node) }
        if let node = fields["challenges"] { game.challenges = try challenges(node, leaderboards: leaderboards, defaultLocale: defaultLocale) }
        if let node = fields["activities"] { game.activities = try activities(node, defaultLocale: defaultLocale) }
        return game
    }

    private func activities(_ node: ManifestNode, defaultLocale: String) throws -> [ActivityDefinition] {
        let items = try node.sequence()
        guard items.count <= ActivityDefinition.maximumPerGame else {
            throw node.fail("\(items.count) activities; at most \(ActivityDefinition.maximumPerGame) are allowed")
        }
        var seen = Set<String>()
        return try items.map { item in
            let definition = try activity(item, defaultLocale: defaultLocale)
            guard seen.insert(definition.identifier).inserted else { throw item.fail("identifier '\(definition.identifier)' is used twice") }
            return definition
        }
    }

    private func activity(_ node: ManifestNode, defaultLocale: String) throws -> ActivityDefinition {
        let fields = try node.mapping(allowed: [
            "identifier", "title", "details", "minPlayers", "maxPlayers", "playStyle", "supportsPartyCode", "defaultProperties",
        ])
        func players(_ key: String) throws -> Int? {
            guard let field = fields[key] else { return nil }
            let value = try field.int()
            let range = ActivityDefinition.playersRange
            guard range.contains(value) else { throw field.fail("must be a whole number from \(range.lowerBound) to \(range.upperBound)") }
            return value
        }
        let (minPlayers, maxPlayers) = (try players("minPlayers"), try players("maxPlayers"))
        guard (minPlayers == nil) == (maxPlayers == nil) else {
            throw (fields["minPlayers"] ?? fields["maxPlayers"])!.fail("minPlayers and maxPlayers go together: set both or neither")
        }
        if let minPlayers, let maxPlayers, minPlayers > maxPlayers {
            throw fields["minPlayers"]!.fail("minPlayers \(minPlayers) is more than maxPlayers \(maxPlayers)")
        }
        var playStyle = ActivityPlayStyle.unspecified
        if let styleNode = fields["playStyle"] {
            let name = try styleNode.string()
            guard let style = ActivityPlayStyle(rawValue: name) else {
                throw styleNode.fail("'\(name)' is not a play style; allowed: \(ActivityPlayStyle.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            playStyle = style
        }
        let supportsPartyCode = try fields["supportsPartyCode"]?.bool() ?? false
        if supportsPartyCode, (maxPlayers ?? 0) < 2 {
            throw fields["supportsPartyCode"]!.fail("a party plays matches: set minPlayers and maxPlayers, with maxPlayers 2 or more")
        }
        var properties: [String: String] = [:]
        if let propertiesNode = fields["defaultProperties"] {
            let pairs = try propertiesNode.anyMapping()
            guard pairs.count <= ActivityDefinition.maximumProperties else {
                throw propertiesNode.fail("\(pairs.count) properties; at most \(ActivityDefinition.maximumProperties) are allowed")
            }
            for (key, value) in pairs {
                let text = try value.string()
                guard ActivityDefinition.propertyKeyLengths.contains(key.count), text.count <= ActivityDefinition.propertyValueMaximumLength else {
                    throw value.fail("keys are 1 to 64 characters and values at most 256")
                }
                properties[key] = text
            }
        }
        return ActivityDefinition(
            identifier: try identifier(required(fields, "identifier", in: node)),
            title: try localizedText(required(fields, "title", in: node), defaultLocale: defaultLocale, maxLength: 100),
            details: try fields["details"].map { try localizedText($0, defaultLocale: defaultLocale, maxLength: 500) },
            minPlayers: minPlayers, maxPlayers: maxPlayers, playStyle: playStyle, supportsPartyCode: supportsPartyCode,
            defaultProperties: properties)
    }

    private func challenges(_ node: ManifestNode, leaderboards: [LeaderboardDefinition], defaultLocale: String) throws -> [ChallengeDefinition] {
        let items = try node.sequence()
        guard items.count <= ChallengeDefinition.maximumPerGame else {
            throw node.fail("\(items.count) challenges; at most \(ChallengeDefinition.maximumPerGame) are allowed")
        }
        var seen = Set<String>()
        return try items.map { item in
            let definition = try challenge(item, leaderboards: leaderboards, defaultLocale: defaultLocale)
            guard seen.insert(definition.identifier).inserted else { throw item.fail("identifier '\(definition.identifier)' is used twice") }
            return definition
        }
    }

    private func challenge(_ node: ManifestNode, leaderboards: [LeaderboardDefinition], defaultLocale: String) throws -> ChallengeDefinition {
        let fields = try node.mapping(allowed: ["identifier", "title", "details", "leaderboard", "repeatable", "durations", "attempts", "maxParticipants"])
        let boardNode = try required(fields, "leaderboard", in: node)
        let category = try boardNode.string()
        guard let board = leaderboards.first(where: { $0.category == category }) else {
            throw boardNode.fail("'\(category)' is not a leaderboard of this game (aggregates cannot be challenged)")
        }
        let repeatable = try fields["repeatable"]?.bool() ?? false
        if repeatable, board.recurrence == nil {
            throw fields["repeatable"]!.fail("a repeatable challenge needs a recurring leaderboard; '\(category)' is classic")
        }
        var durations = board.recurrence == nil ? ChallengeDefinition.defaultDurations : []
        if let durationsNode = fields["durations"] {
            guard board.recurrence == nil else {
                throw durationsNode.fail("a challenge on a recurring leaderboard lasts the rest of the occurrence; leave durations out")
            }
            durations = try durationsNode.sequence().map { try challengeDuration($0) }
            guard (1...10).contains(durations.count), Set(durations).count == durations.count else {
                throw durationsNode.fail("lists 1 to 10 different lengths, such as [1d, 3d, 1w]")
            }
        }
        func number(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
            guard let field = fields[key] else { return nil }
            let value = try field.int()
            guard range.contains(value) else { throw field.fail("must be a whole number from \(range.lowerBound) to \(range.upperBound)") }
            return value
        }
        return ChallengeDefinition(
            identifier: try identifier(required(fields, "identifier", in: node)),
            title: try localizedText(required(fields, "title", in: node), defaultLocale: defaultLocale, maxLength: 100),
            details: try fields["details"].map { try localizedText($0, defaultLocale: defaultLocale, maxLength: 500) },
            leaderboard: category, isRepeatable: repeatable, durations: durations,
            attempts: try number("attempts", in: ChallengeDefinition.attemptsRange),
            maxParticipants: try number("maxParticipants", in: ChallengeDefinition.maxParticipantsRange) ?? 16)
    }

    /// A challenge length such as `30m`, `12h`, `3d` or `1w`, in seconds.
    private func challengeDuration(_ node: ManifestNode) throws -> Int64 {
        let text = try node.string()
        let units: [Character: Int64] = ["m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400]
        let range = ChallengeDefinition.durationRange
        guard let unit = text.last.flatMap({ units[$0] }), let count = Int64(text.dropLast()), count > 0,
            range.contains(count.multipliedReportingOverflow(by: unit).partialValue), !count.multipliedReportingOverflow(by: unit).overflow
        else {
            throw node.fail("'\(text)' is not a length from 5m to 90d: a number and m, h, d or w (such as 3d)")
        }
        return count * unit
    }

    private func savedGames(_ node: ManifestNode) throws -> SavedGameSettings {
        let fields = try node.mapping(allowed: ["saveMaximumBytes", "totalMaximumBytes", "maximumSaves", "nameMaximumLength", "conflictPolicy"])
        var settings = SavedGameSettings()
        func number(_ key: String, in range: ClosedRange<Int64>, _ unit: String) throws -> Int64? {
            guard let field = fields[key] else { return nil }
            let value = Int64(try field.int())
            guard range.contains(value) else { throw field.fail("must be a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound)") }
            return value
        }
        let (saves, names) = (SavedGameSettings.savesRange, SavedGameSettings.nameLengthRange)
        settings.saveBytes = try number("saveMaximumBytes", in: SavedGameSettings.saveBytesRange, "bytes") ?? settings.saveBytes
        settings.totalBytes = try number("totalMaximumBytes", in: SavedGameSettings.totalBytesRange, "bytes") ?? settings.totalBytes
        settings.saves = Int(try number("maximumSaves", in: Int64(saves.lowerBound)...Int64(saves.upperBound), "saves") ?? Int64(settings.saves))
        settings.nameLength =
            Int(try number("nameMaximumLength", in: Int64(names.lowerBound)...Int64(names.upperBound), "characters") ?? Int64(settings.nameLength))
        if let field = fields["conflictPolicy"] {
            let allowed = SavedGameSettings.ConflictPolicy.allCases.map(\.rawValue)
            guard let policy = SavedGameSettings.ConflictPolicy(rawValue: try field.string()) else {
                throw field.fail("must be one of \(allowed.joined(separator: ", "))")
            }
            settings.conflictPolicy = policy
        }
        guard settings.saveBytes <= settings.totalBytes else {
            throw node.fail("saveMaximumBytes (\(settings.saveBytes)) must be at most totalMaximumBytes (\(settings.totalBytes))")
        }
        return settings
    }

    private func turnBased(_ node: ManifestNode) throws -> TurnBasedSettings {
        let fields = try node.mapping(allowed: ["matchDataMaximumBytes", "exchangeDataMaximumBytes", "exchangesPerPlayer", "openMatchesPerPlayer"])
        var settings = TurnBasedSettings()
        func number(_ key: String, in range: ClosedRange<Int>, _ unit: String) throws -> Int? {
            guard let field = fields[key] else { return nil }
            let value = try field.int()
            guard range.contains(value) else { throw field.fail("must be a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound)") }
            return value
        }
        settings.matchDataBytes = try number("matchDataMaximumBytes", in: TurnBasedSettings.matchDataBytesRange, "bytes") ?? settings.matchDataBytes
        settings.exchangeDataBytes =
            try number("exchangeDataMaximumBytes", in: TurnBasedSettings.exchangeDataBytesRange, "bytes") ?? settings.exchangeDataBytes
        settings.exchangesPerPlayer =
            try number("exchangesPerPlayer", in: TurnBasedSettings.exchangesPerPlayerRange, "exchanges") ?? settings.exchangesPerPlayer
        settings.openMatchesPerPlayer =
            try number("openMatchesPerPlayer", in: TurnBasedSettings.openMatchesPerPlayerRange, "matches") ?? settings.openMatchesPerPlayer
        return settings
    }

    private func matchmaking(_ node: ManifestNode) throws -> MatchmakingSettings {
        let fields = try node.mapping(allowed: [
            "fillSeconds", "rolesRequired", "invitationSeconds", "timeoutSeconds", "maxRelayedPlayers", "relayOnly", "ruleSets", "queues",
            "appStoreConnect", "compatibleAppVersions",
        ])
        var settings = MatchmakingSettings()
        try matchmakingRules(fields, into: &settings)
        if let fillNode = fields["fillSeconds"] {
            let range = MatchmakingSettings.fillSecondsRange
            guard let seconds = Double(try fillNode.string()), range.contains(seconds) else {
                throw fillNode.fail("must be a number of seconds from \(range.lowerBound) to \(range.upperBound)")
            }
            settings.fillMilliseconds = Int64((seconds * 1000).rounded())
        }
        if let rolesNode = fields["rolesRequired"] { settings.rolesRequired = try rolesNode.bool() }
        if let relayOnlyNode = fields["relayOnly"] { settings.relayOnly = try relayOnlyNode.bool() }
        if let invitationNode = fields["invitationSeconds"] {
            let range = MatchmakingSettings.invitationSecondsRange
            let seconds = try invitationNode.int()
            guard range.contains(seconds) else {
                throw invitationNode.fail("must be a whole number of seconds from \(range.lowerBound) to \(range.upperBound)")
            }
            settings.invitationSeconds = seconds
        }
        if let timeoutNode = fields["timeoutSeconds"] {
            let range = MatchmakingSettings.timeoutSecondsRange
            guard let seconds = Double(try timeoutNode.string()), range.contains(seconds) else {
                throw timeoutNode.fail("must be a number of seconds from \(range.lowerBound) to \(range.upperBound)")
            }
            settings.timeoutMilliseconds = Int64((seconds * 1000).rounded())
        }
        if let playersNode = fields["maxRelayedPlayers"] {
            let range = MatchmakingSettings.maxRelayedPlayersRange
            let players = try playersNode.int()
            guard range.contains(players) else {
                throw playersNode.fail("must be a whole number of players from \(range.lowerBound) to \(range.upperBound)")
            }
            settings.maxRelayedPlayers = players
        }
        return settings
    }

    func required(_ fields: [String: ManifestNode], _ key: String, in parent: ManifestNode) throws -> ManifestNode {
        guard let node = fields[key] else {
            throw ManifestError(file: parent.file, field: parent.path.isEmpty ? key : "\(parent.path).\(key)", rule: "is required")
        }
        return node
    }

    func identifier(_ node: ManifestNode) throws -> String {
        let value = try node.string()
        guard value.wholeMatch(of: Self.identifierPattern) != nil else {
            throw node.fail("'\(value)' is not an identifier: 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit")
        }
        return value
    }

    private func locale(_ node: ManifestNode) throws -> String {
        let value = try node.string()
        guard value.wholeMatch(of: Self.localePattern) != nil else {
            throw node.fail("'\(value)' is not a locale identifier such as en, ja or pt-BR")
        }
        return value
    }

    private func localizedText(_ node: ManifestNode, defaultLocale: String, maxLength: Int) throws -> LocalizedText {
        var text: LocalizedText = [:]
        for (key, value) in try node.anyMapping() {
            _ = try locale(ManifestNode(node: value.node, path: value.path, file: value.file).withString(key))
            let string = try value.string()
            guard (1...maxLength).contains(string.count) else { throw value.fail("must be 1 to \(maxLength) characters") }
            text[key] = string
        }
        guard text[defaultLocale] != nil else { throw node.fail("needs a text for the default locale '\(defaultLocale)'") }
        return text
    }

    private func leaderboard(_ node: ManifestNode, defaultLocale: String) throws -> LeaderboardDefinition {
        let fields = try node.mapping(allowed: [
            "category", "default", "title", "format", "suffix", "order", "currency", "minValue", "maxValue", "hidden", "description", "recurring",
            "writePolicy", "verification",
        ])
        let category = try identifier(required(fields, "category", in: node))
        let formatNode = try required(fields, "format", in: node)
        let formatName = try formatNode.string()
        guard let format = ScoreFormat(rawValue: formatName) else {
            throw formatNode.fail("'\(formatName)' is not a format; allowed: \(ScoreFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var order = ScoreOrder.descending
        if let orderNode = fields["order"] {
            let name = try orderNode.string()
            guard let parsed = ScoreOrder(rawValue: name) else { throw orderNode.fail("'\(name)' is not an order; allowed: descending, ascending") }
            order = parsed
        }
        var suffix: [String: PluralSuffix] = [:]
        if let suffixNode = fields["suffix"] {
            for (localeKey, formsNode) in try suffixNode.anyMapping() {
                _ = try locale(formsNode.withString(localeKey))
                let forms = try formsNode.mapping(allowed: Set(PluralCategory.allCases.map(\.rawValue)))
                var texts: [PluralCategory: String] = [:]
                for (name, text) in forms {
                    if let category = PluralCategory(rawValue: name) { texts[category] = try text.string() }
                }
                guard let parsed = PluralSuffix(forms: texts) else { throw formsNode.fail("needs an 'other' form") }
                suffix[localeKey] = parsed
            }
        }
        var currency = "USD"
        if let currencyNode = fields["currency"] {
            guard format == .moneyWhole || format == .money2 else { throw currencyNode.fail("only money formats (moneyWhole, money2) take a currency") }
            currency = try currencyNode.string()
            guard currency.wholeMatch(of: Self.currencyPattern) != nil else {
                throw currencyNode.fail("'\(currency)' is not an ISO 4217 code such as USD or EUR")
            }
        }
        let defaults = LeaderboardDefinition.defaultValueRange(for: format)
        let minValue = try fields["minValue"].map { Int64(try $0.int()) } ?? defaults.lowerBound
        let maxValue = try fields["maxValue"].map { Int64(try $0.int()) } ?? defaults.upperBound
        guard minValue > Int64.min else { throw (fields["minValue"] ?? node).fail("minValue must be above \(Int64.min)") }
        guard minValue <= maxValue else { throw (fields["maxValue"] ?? node).fail("maxValue \(maxValue) is below minValue \(minValue)") }
        var writePolicy = LeaderboardDefinition.WritePolicy.open
        if let policyNode = fields["writePolicy"] {
            let name = try policyNode.string()
            guard let policy = LeaderboardDefinition.WritePolicy(rawValue: name) else {
                throw policyNode.fail(
                    "'\(name)' is not a write policy; allowed: \(LeaderboardDefinition.WritePolicy.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            writePolicy = policy
        }
        let recurrence = try fields["recurring"].map(recurrence)
        var verification: LeaderboardDefinition.Verification?
        if let verificationNode = fields["verification"] {
            verification = try self.verification(verificationNode)
            if writePolicy == .serverOnly {
                throw verificationNode.fail("a serverOnly board takes no device's scores, so there is nothing to verify; use open or signed")
            }
            if recurrence?.tournament != nil {
                throw verificationNode.fail(
                    "a tournament's entries and attempts are counted when a score arrives; verification is not available on tournaments")
            }
        }
        return LeaderboardDefinition(
            category: category, isDefault: try fields["default"]?.bool() ?? false,
            title: try localizedText(required(fields, "title", in: node), defaultLocale: defaultLocale, maxLength: 100),
            format: format, suffix: suffix, order: order, currency: currency, valueRange: minValue...maxValue,
            isHidden: try fields["hidden"]?.bool() ?? false,
            description: try fields["description"].map { try localizedText($0, defaultLocale: defaultLocale, maxLength: 500) },
            recurrence: recurrence, writePolicy: writePolicy, verification: verification
        )
    }

    /// A board's `verification:` block: `timeoutSeconds` (0.1 to 30, default 5).
    private func verification(_ node: ManifestNode) throws -> LeaderboardDefinition.Verification {
        let fields = try node.mapping(allowed: ["timeoutSeconds"])
        var verification = LeaderboardDefinition.Verification()
        if let timeoutNode = fields["timeoutSeconds"] {
            let seconds = try timeoutNode.double()
            guard (0.1...30).contains(seconds) else { throw timeoutNode.fail("must be 0.1 to 30 seconds") }
            verification.timeoutMillis = Int64((seconds * 1000).rounded())
        }
        return verification
    }

    /// A recurring leaderboard's `recurring:` block: Apple's rule (`start`, `durationSeconds`, `intervalSeconds`) or a
    /// calendar rule (`every` with `at`, `weekday` or `day`; or `cron`) in `timeZone`, and `keep`, `lifetimeBest`.
    private func recurrence(_ node: ManifestNode) throws -> LeaderboardDefinition.Recurrence {
        let fields = try node.mapping(allowed: [
            "start", "durationSeconds", "intervalSeconds", "every", "at", "weekday", "day", "cron", "timeZone", "keep", "lifetimeBest", "tournament",
        ])
        let kinds = ["durationSeconds", "every", "cron"].filter { fields[$0] != nil }
        guard kinds.count == 1 else {
            throw node.fail(
                "a recurring leaderboard takes one rule: durationSeconds (with start and intervalSeconds: Apple's), every (day, week or month) or cron; found \(kinds.isEmpty ? "none" : kinds.joined(separator: ", "))"
            )
        }
        let start = try fields["start"].map { node -> Int64 in
            let text = try node.string()
            guard let date = try? Date(text, strategy: .iso8601) else {
                throw node.fail("'\(text)' is not an ISO 8601 time such as 2026-01-05T00:00:00Z")
            }
            return Int64((date.timeIntervalSince1970 * 1000).rounded())
        }
        var keep: Int?
        if let keepNode = fields["keep"] {
            keep = try keepNode.int()
            guard keep! >= 1 else { throw keepNode.fail("keep is how many occurrences stay queryable, the running one included: 1 or more") }
        }
        let lifetimeBest = try fields["lifetimeBest"]?.bool() ?? false
        let tournament = try fields["tournament"].map(tournamentRules)
        func done(_ rule: OccurrenceSchedule.Rule, _ zone: TimeZone, _ name: String) -> LeaderboardDefinition.Recurrence {
            .init(
                schedule: OccurrenceSchedule(rule: rule, timeZone: zone, timeZoneName: name), keep: keep, lifetimeBest: lifetimeBest,
                tournament: tournament)
        }
        if let durationNode = fields["durationSeconds"] {
            for key in ["every", "at", "weekday", "day", "cron", "timeZone"] where fields[key] != nil {
                throw fields[key]!.fail("Apple's rule (durationSeconds) runs in UTC from its start and takes no \(key)")
            }
            guard let start else { throw node.fail("Apple's rule needs start: the first occurrence's start, such as 2026-01-05T00:00:00Z") }
            let duration = try durationNode.int()
            guard (60...Self.maximumOccurrenceSeconds).contains(duration) else {
                throw durationNode.fail("an occurrence lasts 60 to \(Self.maximumOccurrenceSeconds) seconds (a year); got \(duration)")
            }
            let interval = try fields["intervalSeconds"].map { try $0.int() } ?? duration
            guard (duration...Self.maximumOccurrenceSeconds).contains(interval) else {
                throw (fields["intervalSeconds"] ?? node).fail(
                    "intervalSeconds (from one start to the next) is at least durationSeconds (\(duration)) and at most a year; got \(interval)")
            }
            return done(.fixed(start: start, duration: Int64(duration) * 1000, interval: Int64(interval) * 1000), TimeZone(identifier: "UTC")!, "UTC")
        }
        if let intervalNode = fields["intervalSeconds"] { throw intervalNode.fail("intervalSeconds belongs to Apple's rule, with durationSeconds") }
        var (zone, zoneName) = (TimeZone(identifier: "UTC")!, "UTC")
        if let zoneNode = fields["timeZone"] {
            let name = try zoneNode.string()
            guard name.contains("/") || name == "UTC", let parsed = TimeZone(identifier: name) else {
                throw zoneNode.fail("'\(name)' is not an IANA time zone such as UTC, Europe/Berlin or America/New_York")
            }
            (zone, zoneName) = (parsed, name)
        }
        let cron: CronExpression
        if let cronNode = fields["cron"] {
            for key in ["at", "weekday", "day"] where fields[key] != nil {
                throw fields[key]!.fail("cron names every start itself and takes no \(key)")
            }
            do {
                cron = try CronExpression(try cronNode.string())
            } catch let error as CronExpression.ParseError {
                throw cronNode.fail(error.description)
            }
        } else {
            cron = try calendarRule(fields)
        }
        return done(.calendar(cron, notBefore: start), zone, zoneName)
    }

    /// A recurring board's `tournament:` block: `maxSize`, `attempts` (1…1,000,000 each) and `joinRequired`.
    private func tournamentRules(_ node: ManifestNode) throws -> LeaderboardDefinition.TournamentRules {
        let fields = try node.mapping(allowed: ["maxSize", "attempts", "joinRequired"])
        func count(_ key: String) throws -> Int? {
            guard let field = fields[key] else { return nil }
            let value = try field.int()
            guard (1...1_000_000).contains(value) else { throw field.fail("\(key) is 1 to 1000000; got \(value)") }
            return value
        }
        return .init(maxSize: try count("maxSize"), attempts: try count("attempts"), joinRequired: try fields["joinRequired"]?.bool() ?? false)
    }

    /// Longest occurrence and interval of Apple's rule: a year.
    private static let maximumOccurrenceSeconds = 366 * 86_400

    /// `every: day | week | month` with `at` (HH:MM, default 00:00), `weekday` (weeks) or `day` (months: 1–28), as cron.
    private func calendarRule(_ fields: [String: ManifestNode]) throws -> CronExpression {
        let everyNode = fields["every"]!
        let every = try everyNode.string()
        var (hour, minute) = (0, 0)
        if let atNode = fields["at"] {
            let text = try atNode.string()
            let parts = text.split(separator: ":")
            guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let h = Int(parts[0]), let m = Int(parts[1]), (0...23).contains(h),
                (0...59).contains(m)
            else { throw atNode.fail("'\(text)' is not a local time such as 00:00 or 18:30") }
            (hour, minute) = (h, m)
        }
        let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        func refuse(_ key: String, _ why: String) throws {
            if let node = fields[key] { throw node.fail(why) }
        }
        let day: String
        switch every {
        case "day":
            try refuse("weekday", "a daily board takes no weekday")
            try refuse("day", "a daily board takes no day")
            day = "* * *"
        case "week":
            try refuse("day", "a weekly board takes a weekday, not a day")
            guard let weekdayNode = fields["weekday"] else { throw everyNode.fail("a weekly board needs weekday: monday … sunday") }
            let name = try weekdayNode.string()
            guard let index = weekdays.firstIndex(of: name.lowercased()) else {
                throw weekdayNode.fail("'\(name)' is not a day of the week; allowed: \(weekdays.joined(separator: ", "))")
            }
            day = "* * \(index)"
        case "month":
            try refuse("weekday", "a monthly board takes a day of the month, not a weekday")
            let dayNode = fields["day"]
            let number = try dayNode?.int() ?? 1
            guard (1...28).contains(number) else {
                throw (dayNode ?? everyNode).fail("a monthly board starts on day 1 to 28 (every month has it); got \(number); use cron for others")
            }
            day = "\(number) * *"
        default:
            throw everyNode.fail("'\(every)' is not a period; allowed: day, week, month")
        }
        return try! CronExpression("\(minute) \(hour) \(day)")
    }

    private func aggregate(_ node: ManifestNode, defaultLocale: String) throws -> AggregateDefinition {
        let fields = try node.mapping(allowed: ["category", "default", "title", "members"])
        let membersNode = try required(fields, "members", in: node)
        let members = try membersNode.sequence().map { try identifier($0) }
        guard !members.isEmpty else { throw membersNode.fail("needs at least one member leaderboard") }
        // A report without a category goes to the default board, and aggregates take no reports.
        if let defaultNode = fields["default"], try defaultNode.bool() {
            throw defaultNode.fail(
                "an aggregate cannot be the default leaderboard: scores reported without a category go to the default, and aggregates take no reports; make one of its members the default instead"
            )
        }
        return AggregateDefinition(
            category: try identifier(required(fields, "category", in: node)),
            isDefault: false,
            title: try localizedText(required(fields, "title", in: node), defaultLocale: defaultLocale, maxLength: 100),
            members: members
        )
    }

    private func leaderboardSet(_ node: ManifestNode, defaultLocale: String) throws -> LeaderboardSetDefinition {
        let fields = try node.mapping(allowed: ["identifier", "title", "groupIdentifier", "leaderboards"])
        let boardsNode = try required(fields, "leaderboards", in: node)
        let boards = try boardsNode.sequence().map { try identifier($0) }
        guard (1...Limits.maximumLeaderboardsPerSet).contains(boards.count) else {
            throw boardsNode.fail("a set holds 1 to \(Limits.maximumLeaderboardsPerSet) leaderboards; this one \(boards.count)")
        }
        guard Set(boards).count == boards.count else { throw boardsNode.fail("names a leaderboard twice") }
        return LeaderboardSetDefinition(
            identifier: try identifier(required(fields, "identifier", in: node)),
            title: try localizedText(required(fields, "title", in: node), defaultLocale: defaultLocale, maxLength: 100),
            groupIdentifier: try fields["groupIdentifier"].map { try identifier($0) }, leaderboards: boards)
    }

    private func checkLeaderboardRules(
        _ leaderboards: [LeaderboardDefinition], _ aggregates: [AggregateDefinition], sets: [LeaderboardSetDefinition],
        fields: [String: ManifestNode]
    ) throws {
        let listNode = fields["leaderboards"] ?? fields["aggregates"] ?? root
        // Sets raise the limit as Apple's do: boards outside every set count against it.
        let inSets = Set(sets.flatMap(\.leaderboards))
        let outside = (leaderboards.map(\.category) + aggregates.map(\.category)).filter { !inSets.contains($0) }.count
        guard outside <= Limits.maximumLeaderboardsPerGame else {
            throw listNode.fail(
                "\(outside) leaderboards outside every set (aggregates included); at most \(Limits.maximumLeaderboardsPerGame) are allowed (put more in leaderboardSets)"
            )
        }
        if let setsNode = fields["leaderboardSets"] {
            guard sets.count <= Limits.maximumLeaderboardSetsPerGame else {
                throw setsNode.fail("\(sets.count) leaderboard sets; at most \(Limits.maximumLeaderboardSetsPerGame) are allowed")
            }
            let known = Set(leaderboards.map(\.category) + aggregates.map(\.category))
            var identifiers = Set<String>()
            for (index, set) in sets.enumerated() {
                guard identifiers.insert(set.identifier).inserted else {
                    throw ManifestError(file: root.file, field: "leaderboardSets[\(index)].identifier", rule: "'\(set.identifier)' is used twice")
                }
                if let unknown = set.leaderboards.first(where: { !known.contains($0) }) {
                    throw ManifestError(
                        file: root.file, field: "leaderboardSets[\(index)].leaderboards", rule: "'\(unknown)' is not a leaderboard of this game")
                }
            }
        }
        let total = leaderboards.count + aggregates.count
        var seen = Set<String>()
        for (index, category) in (leaderboards.map(\.category) + aggregates.map(\.category)).enumerated() {
            guard seen.insert(category).inserted else {
                let (list, position) = index < leaderboards.count ? ("leaderboards", index) : ("aggregates", index - leaderboards.count)
                throw ManifestError(
                    file: root.file, field: "\(list)[\(position)].category", rule: "'\(category)' is used twice; categories are unique in a game")
            }
        }
        let defaults = leaderboards.filter(\.isDefault).count + aggregates.filter(\.isDefault).count
        if total > 0 && defaults != 1 {
            throw listNode.fail("exactly one leaderboard must be the default (default: true); found \(defaults)")
        }
        let byCategory = Dictionary(uniqueKeysWithValues: leaderboards.map { ($0.category, $0) })
        let aggregateCategories = Set(aggregates.map(\.category))
        var owner: [String: String] = [:]
        for (index, aggregate) in aggregates.enumerated() {
            let field = "aggregates[\(index)].members"
            func fail(_ rule: String) -> ManifestError { ManifestError(file: root.file, field: field, rule: rule) }
            var memberDefinitions: [LeaderboardDefinition] = []
            for member in aggregate.members {
                if aggregateCategories.contains(member) { throw fail("'\(member)' is an aggregate; aggregates cannot contain aggregates") }
                guard let definition = byCategory[member] else { throw fail("'\(member)' is not a leaderboard of this game") }
                if definition.recurrence != nil { throw fail("'\(member)' is a recurring leaderboard; aggregates rank classic leaderboards only") }
                if let other = owner[member], other != aggregate.category || memberDefinitions.contains(definition) {
                    throw fail("'\(member)' already belongs to aggregate '\(other)'; a leaderboard belongs to at most one aggregate")
                }
                owner[member] = aggregate.category
                memberDefinitions.append(definition)
            }
            if Set(memberDefinitions.map(\.format)).count > 1 { throw fail("members must share one format") }
            if Set(memberDefinitions.map(\.order)).count > 1 { throw fail("members must share one order") }
        }
    }

    private func achievement(_ node: ManifestNode, defaultLocale: String) throws -> AchievementDefinition {
        let fields = try node.mapping(allowed: ["identifier", "title", "unachievedDescription", "achievedDescription", "points", "hidden", "image"])
        let pointsNode = try required(fields, "points", in: node)
        let points = try pointsNode.int()
        guard Limits.achievementPointsRange.contains(points) else {
            throw pointsNode.fail("\(points) points; each achievement is worth 1 to 100 points")
        }
        var image: Data?
        if let imageNode = fields["image"] {
            image = try png(imageNode)
        }
        return AchievementDefinition(
            identifier: try identifier(required(fields, "identifier", in: node)),
            title: try localizedText(required(fields, "title", in: node), defaultLocale: defaultLocale, maxLength: 100),
            unachievedDescription: try localizedText(required(fields, "unachievedDescription", in: node), defaultLocale: defaultLocale, maxLength: 500),
            achievedDescription: try localizedText(required(fields, "achievedDescription", in: node), defaultLocale: defaultLocale, maxLength: 500),
            points: points, hidden: try fields["hidden"]?.bool() ?? false, image: image
        )
    }

    private func png(_ node: ManifestNode) throws -> Data {
        let relative = try node.string()
        guard !relative.hasPrefix("/"), !relative.split(separator: "/").contains("..") else {
            throw node.fail("'\(relative)' must be a path inside the manifest's folder (no leading '/', no '..')")
        }
        let url = baseDirectory.appendingPathComponent(relative)
        guard let data = FileManager.default.contents(atPath: url.path) else { throw node.fail("'\(relative)' does not exist next to the manifest") }
        guard data.count <= 1024 * 1024 else { throw node.fail("'\(relative)' is larger than 1 MiB") }
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard data.prefix(8).elementsEqual(signature) else { throw node.fail("'\(relative)' is not a PNG image") }
        return data
    }

    private func checkAchievementRules(_ achievements: [AchievementDefinition], fields: [String: ManifestNode]) throws {
        var seen = Set<String>()
        for (index, achievement) in achievements.enumerated() where !seen.insert(achievement.identifier).inserted {
            throw ManifestError(
                file: root.file, field: "achievements[\(index)].identifier", rule: "'\(achievement.identifier)' is used twice; identifiers are unique in a game"
            )
        }
        let total = achievements.reduce(0) { $0 + $1.points }
        if total > Limits.maximumAchievementPointsPerGame {
            throw (fields["achievements"] ?? root).fail(
                "achievements are worth \(total) points in all; a game may have at most \(Limits.maximumAchievementPointsPerGame)")
        }
    }
}

extension ManifestNode {
    /// The same location, holding a string (used to check mapping keys with the value checkers).
    func withString(_ string: String) -> ManifestNode {
        ManifestNode(node: Node(string), path: path, file: file)
    }
}
