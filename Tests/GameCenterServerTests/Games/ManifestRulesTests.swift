import Foundation
import Testing
@testable import GameCenterServer

/// Apple's queues and rule sets in a manifest, written inline or read from App Store Connect's own JSON unchanged.
@Suite struct ManifestRulesTests {
    /// Writes the manifest and the other files to a new folder and loads the manifest.
    static func load(_ yaml: String, files: [String: String] = [:]) throws -> Game {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        let file = folder.appendingPathComponent("game.yaml")
        try ("bundleID: com.example.mygame\nname: My Game\n" + yaml).write(to: file, atomically: true, encoding: .utf8)
        return try ManifestLoader.loadManifest(file: file.path)
    }

    static let inline = """
        matchmaking:
          ruleSets:
            - referenceName: com.example.mygame.SkillBasedRules
              ruleLanguageVersion: 1
              minPlayers: 2
              maxPlayers: 4
              teams:
                - { referenceName: blue, minPlayers: 1, maxPlayers: 2 }
                - { referenceName: red, minPlayers: 1, maxPlayers: 2 }
              rules:
                - referenceName: SkillDifference
                  description: Players must have skill in given range
                  type: MATCH
                  expression: "diff(players[].properties.skill) <= agedValues(avg(requests[].secondsInQueue), `20`, [ `40`, `100` ], [ `10`, `20` ])"
                - referenceName: SameSizeTeams
                  description: Teams must have same number of players
                  type: TEAM
                  expression: "length(teams[?name == 'red'].players[]) == length(teams[?name == 'blue'].players[])"
          queues:
            - referenceName: com.example.mygame.SkillBasedQueue
              ruleSet: com.example.mygame.SkillBasedRules
        """

    /// The same rule set and queue as App Store Connect returns them: the rule set with its rules and teams
    /// included, and the queue list with its rule set included.
    static let exported = """
        {
          "data": {
            "type": "gameCenterMatchmakingRuleSets",
            "id": "36c540f2-031a-4e35-8260-d0804e40376b",
            "attributes": { "referenceName": "com.example.mygame.SkillBasedRules", "ruleLanguageVersion": 1, "minPlayers": 2, "maxPlayers": 4 },
            "relationships": {
              "rules": { "data": [ { "type": "gameCenterMatchmakingRules", "id": "r-1" }, { "type": "gameCenterMatchmakingRules", "id": "r-2" } ] },
              "teams": { "data": [ { "type": "gameCenterMatchmakingTeams", "id": "t-1" }, { "type": "gameCenterMatchmakingTeams", "id": "t-2" } ] },
              "matchmakingQueues": { "links": { "self": "https://api.appstoreconnect.apple.com/v1/..." } }
            },
            "links": { "self": "https://api.appstoreconnect.apple.com/v1/gameCenterMatchmakingRuleSets/36c540f2-031a-4e35-8260-d0804e40376b" }
          },
          "included": [
            { "type": "gameCenterMatchmakingRules", "id": "r-1",
              "attributes": { "referenceName": "SkillDifference", "description": "Players must have skill in given range", "type": "MATCH",
                "expression": "diff(players[].properties.skill) <= agedValues(avg(requests[].secondsInQueue), `20`, [ `40`, `100` ], [ `10`, `20` ])",
                "weight": null } },
            { "type": "gameCenterMatchmakingRules", "id": "r-2",
              "attributes": { "referenceName": "SameSizeTeams", "description": "Teams must have same number of players", "type": "TEAM",
                "expression": "length(teams[?name == 'red'].players[]) == length(teams[?name == 'blue'].players[])", "weight": null } },
            { "type": "gameCenterMatchmakingTeams", "id": "t-1", "attributes": { "referenceName": "blue", "minPlayers": 1, "maxPlayers": 2 } },
            { "type": "gameCenterMatchmakingTeams", "id": "t-2", "attributes": { "referenceName": "red", "minPlayers": 1, "maxPlayers": 2 } }
          ],
          "links": { "self": "https://api.appstoreconnect.apple.com/v1/gameCenterMatchmakingRuleSets/36c540f2-031a-4e35-8260-d0804e40376b" }
        }
        """

    static let exportedQueues = """
        {
          "data": [ {
            "type": "gameCenterMatchmakingQueues", "id": "q-1",
            "attributes": { "referenceName": "com.example.mygame.SkillBasedQueue", "classicMatchmakingBundleIds": null },
            "relationships": {
              "ruleSet": { "data": { "type": "gameCenterMatchmakingRuleSets", "id": "36c540f2-031a-4e35-8260-d0804e40376b" } },
              "experimentRuleSet": { "data": null }
            }
          } ],
          "included": [ {
            "type": "gameCenterMatchmakingRuleSets", "id": "36c540f2-031a-4e35-8260-d0804e40376b",
            "attributes": { "referenceName": "com.example.mygame.SkillBasedRules", "ruleLanguageVersion": 1, "minPlayers": 2, "maxPlayers": 4 }
          } ],
          "meta": { "paging": { "total": 1, "limit": 50 } }
        }
        """

    @Test func inlineRuleSetsAndQueuesLoad() throws {
        let settings = try Self.load(Self.inline).matchmaking
        let ruleSet = try #require(settings.ruleSets["com.example.mygame.SkillBasedRules"])
        #expect(ruleSet.minPlayers == 2 && ruleSet.maxPlayers == 4)
        #expect(ruleSet.teams.map(\.name) == ["blue", "red"])
        #expect(ruleSet.rules.map(\.type) == [.match, .team])
        #expect(settings.queues["com.example.mygame.SkillBasedQueue"]?.ruleSet == "com.example.mygame.SkillBasedRules")
    }

    @Test func appStoreConnectExportsImportUnchangedAndEqualTheInlineForm() throws {
        let imported = try Self.load(
            "matchmaking:\n  appStoreConnect: [ruleset.json, queues.json]\n",
            files: ["ruleset.json": Self.exported, "queues.json": Self.exportedQueues]
        ).matchmaking
        #expect(imported.ruleSets == (try Self.load(Self.inline).matchmaking.ruleSets))
        #expect(imported.queues == (try Self.load(Self.inline).matchmaking.queues))
    }

    @Test(arguments: [
        // A broken expression names its position.
        (
            "      rules:\n        - { referenceName: R, description: d, type: MATCH, expression: \"diff(players[].properties.skill <= `20`\" }",
            "ruleSets[0].rules[0].expression", "position"
        ),
        (
            "      rules:\n        - { referenceName: R, description: d, type: MATCH, expression: \"nosuch(players)\" }",
            "ruleSets[0].rules[0].expression", "nosuch"
        ),
        ("      rules:\n        - { referenceName: R, description: d, type: SOMETIMES, expression: \"`true`\" }", "ruleSets[0].rules[0].type", "COMPATIBLE"),
        (
            "      rules:\n        - { referenceName: R, description: d, type: COMPATIBLE, expression: \"`true`\", weight: 2 }",
            "ruleSets[0].rules[0].weight", "only DISTANCE and MATCH"
        ),
        ("      rules:\n        - { referenceName: R, description: d, type: TEAM, expression: \"`true`\" }", "ruleSets[0].rules[0]", "needs teams"),
        (
            "      rules:\n        - { referenceName: R, description: d, type: MATCH, expression: \"`true`\" }\n        - { referenceName: R, description: d, type: MATCH, expression: \"`true`\" }",
            "ruleSets[0].rules[1]", "named twice"
        ),
        ("      teams:\n        - { referenceName: solo, minPlayers: 1, maxPlayers: 2 }", "ruleSets[0]", "at least two"),
        (
            "      teams:\n        - { referenceName: a, minPlayers: 3, maxPlayers: 3 }\n        - { referenceName: b, minPlayers: 3, maxPlayers: 3 }",
            "ruleSets[0]", "never fits"
        ),
    ])
    func aBrokenRuleSetIsRefusedNamingTheField(rules: String, field: String, fragment: String) throws {
        let yaml = """
            matchmaking:
              ruleSets:
                - referenceName: set
                  ruleLanguageVersion: 1
                  minPlayers: 2
                  maxPlayers: 4

            """ + rules + "\n"
        let error = #expect(throws: ManifestError.self) { try Self.load(yaml) }
        #expect(error?.field == "matchmaking.\(field)", "\(String(describing: error))")
        #expect(error?.rule.contains(fragment) == true, "\(String(describing: error))")
    }

    @Test func queuesMustNameKnownRuleSetsAndValidNames() throws {
        let base = "matchmaking:\n  ruleSets:\n    - { referenceName: set, ruleLanguageVersion: 1, minPlayers: 2, maxPlayers: 2 }\n  queues:\n"
        let unknown = #expect(throws: ManifestError.self) { try Self.load(base + "    - { referenceName: com.example.Q, ruleSet: other }\n") }
        #expect(unknown?.field == "matchmaking.queues[0].ruleSet")
        let badName = #expect(throws: ManifestError.self) { try Self.load(base + "    - { referenceName: \"com example\", ruleSet: set }\n") }
        #expect(badName?.rule.contains("reverse-DNS") == true)
        let version = #expect(throws: ManifestError.self) {
            try Self.load("matchmaking:\n  ruleSets:\n    - { referenceName: set, ruleLanguageVersion: 2, minPlayers: 2, maxPlayers: 2 }\n")
        }
        #expect(version?.field == "matchmaking.ruleSets[0].ruleLanguageVersion")
    }

    @Test func theQueueThatListsTheGamesBundleIDTakesItsClassicRequestsAndOnlyOneMay() throws {
        let base = "matchmaking:\n  ruleSets:\n    - { referenceName: set, ruleLanguageVersion: 1, minPlayers: 2, maxPlayers: 2 }\n  queues:\n"
        let listed = try Self.load(
            base + "    - { referenceName: com.example.A, ruleSet: set, classicMatchmakingBundleIds: [com.example.other, com.example.mygame] }\n"
                + "    - { referenceName: com.example.B, ruleSet: set, classicMatchmakingBundleIds: [com.example.other] }\n")
        #expect(listed.matchmaking.classicQueue == "com.example.A")
        #expect(try Self.load(base + "    - { referenceName: com.example.A, ruleSet: set }\n").matchmaking.classicQueue == nil)
        let twice = #expect(throws: ManifestError.self) {
            try Self.load(
                base + "    - { referenceName: com.example.A, ruleSet: set, classicMatchmakingBundleIds: [com.example.mygame] }\n"
                    + "    - { referenceName: com.example.B, ruleSet: set, classicMatchmakingBundleIds: [com.example.mygame] }\n")
        }
        #expect(twice?.rule.contains("com.example.A and com.example.B both list com.example.mygame") == true, "\(String(describing: twice))")
    }
}
