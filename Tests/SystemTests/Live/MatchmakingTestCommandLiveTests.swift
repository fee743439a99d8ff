import Foundation
import JMESPath
import Testing

/// `gamecenter matchmaking test`: the example game's rule sets evaluated offline by the real binary, its output in
/// the shape of Apple's `matchmakingResults`, and clear failures for what it cannot use.
@Suite struct MatchmakingTestCommandLiveTests {
    static let manifest = LiveServer.root.appendingPathComponent("games/tapper.yaml").path

    /// Runs the command with `requests` on standard input: exit status, standard output as JSON (when it is), and
    /// standard error.
    static func run(_ arguments: [String], requests: String) throws -> (status: Int32, output: JSONValue?, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: LiveServer.binary)
        process.arguments = ["matchmaking", "test", "--manifest", manifest, "--requests", "-"] + arguments
        let (input, output, error) = (Pipe(), Pipe(), Pipe())
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        input.fileHandleForWriting.write(Data(requests.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, try? JSONValue(jsonData: data), message)
    }

    @Test func theRankedQueuePairsSkillsAndRegionsAndWidensWithTime() throws {
        let requests = """
            [ { "skill": 1, "region": "eu" }, { "skill": 30, "region": "eu" }, { "skill": 2, "region": "us" }, { "skill": 15, "region": "eu" } ]
            """
        let now = try Self.run(["--queue", "com.example.tapper.Ranked"], requests: requests)
        #expect(now.status == 0, "\(now.error)")
        #expect(now.output?["matchmakingResults"] == [[["requestName": "r1", "teamAssignments": nil], ["requestName": "r4", "teamAssignments": nil]]])
        #expect(now.output?["unmatched"] == ["r2", "r3"])
        // Every evaluation is listed with the requests it saw.
        let verdicts = try #require(now.output?["verdicts"]?.arrayValue)
        #expect(verdicts.contains(["rule": "SkillDifference", "requests": ["r1", "r2"], "result": false]))
        // After 10 s the window is 40: r1 and r2 (29 apart) play.
        let later = try Self.run(["--queue", "com.example.tapper.Ranked", "--seconds-in-queue", "10"], requests: requests)
        #expect(
            later.output?["matchmakingResults"]?.arrayValue?.first == [
                ["requestName": "r1", "teamAssignments": nil], ["requestName": "r2", "teamAssignments": nil],
            ])
    }

    @Test func theTeamsQueueAssignsBalancedTeamsAndKeepsFriendsTogether() throws {
        let result = try Self.run(
            ["--rule-set", "com.example.tapper.TeamRules"], requests: "[ [ { \"skill\": 1 }, { \"skill\": 4 } ], { \"skill\": 2 }, { \"skill\": 3 } ]")
        #expect(result.status == 0, "\(result.error)")
        let match = try #require(result.output?["matchmakingResults"]?.arrayValue?.first?.arrayValue)
        #expect(match.count == 3)
        #expect(
            match[0]["teamAssignments"] == [["playerId": "r1_p1", "team": "blue"], ["playerId": "r1_p2", "team": "blue"]],
            "r1 and the friend it invites play together")
        #expect(match[1]["teamAssignments"] == [["playerId": "r2_p1", "team": "red"]])
    }

    @Test func whatTheCommandCannotUseFailsNamingIt() throws {
        let unknown = try Self.run(["--queue", "com.example.tapper.Nope"], requests: "[]")
        #expect(unknown.status == 1 && unknown.error.contains("no queue 'com.example.tapper.Nope'") && unknown.error.contains("com.example.tapper.Ranked"))
        let reserved = try Self.run(["--queue", "com.example.tapper.Ranked"], requests: "[ { \"gc\": 1 } ]")
        #expect(reserved.status == 1 && reserved.error.contains("r1: the property key 'gc' is reserved"))
        let notJSON = try Self.run(["--queue", "com.example.tapper.Ranked"], requests: "[ {")
        #expect(notJSON.status == 1 && notJSON.error.contains("is not JSON"))
        let both = try Self.run(["--queue", "com.example.tapper.Ranked", "--rule-set", "com.example.tapper.TeamRules"], requests: "[]")
        #expect(both.status != 0 && both.error.contains("either --queue or --rule-set"))
    }
}

extension JSONValue {
    /// The member `key` of an object; nil for anything else.
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The elements of an array; nil for anything else.
    var arrayValue: [JSONValue]? {
        guard case .array(let elements) = self else { return nil }
        return elements
    }
}
