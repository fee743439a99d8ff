import ArgumentParser
import Foundation
import GameCenterServer
import JMESPath

/// `gamecenter matchmaking test`: evaluates a game's matchmaking rules offline, before they go live.
struct MatchmakingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matchmaking", abstract: "Work with rule-based matchmaking.", subcommands: [Test.self]
    )

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run one matching pass of a rule set over test requests and print the matches and every rule's verdicts as JSON.",
            discussion: """
                The requests file is a JSON array, as Apple's testrules.py takes it: each request is an object of its \
                player's properties, or an array of objects (the requester, then the players it invites). The requester's \
                object may also set appVersion, bundleId, platform, locale, minPlayers, maxPlayers, secondsInQueue, \
                latitude and longitude. Requests are named r1, r2, … and players r1_p1, … in the output.
                """
        )

        @Option(help: "The game's manifest.") var manifest: String
        @Option(help: "A JSON file of test requests, or - for standard input.") var requests: String
        @Option(help: "The queue whose rule set to test (its reference name).") var queue: String?
        @Option(name: .customLong("rule-set"), help: "The rule set to test, when not through a queue.") var ruleSet: String?
        @Option(name: .customLong("seconds-in-queue"), help: "Seconds added to every request's time in the queue.")
        var extraSeconds: Double = 0

        func validate() throws {
            guard (queue == nil) != (ruleSet == nil) else { throw ValidationError("name either --queue or --rule-set") }
            guard extraSeconds.isFinite, (0...86_400).contains(extraSeconds) else { throw ValidationError("--seconds-in-queue is 0 to 86400") }
        }

        func run() throws {
            let game: Game
            do {
                game = try ManifestLoader.loadManifest(file: manifest)
            } catch let error as ManifestError {
                throw fail("\(error)")
            }
            let settings = game.matchmaking
            let name =
                try queue.map { queue in
                    guard let definition = settings.queues[queue] else {
                        throw fail("no queue '\(queue)' in \(manifest); its queues: \(settings.queues.keys.sorted().joined(separator: ", "))")
                    }
                    return definition.ruleSet
                } ?? ruleSet!
            guard let rules = settings.ruleSets[name] else {
                throw fail("no rule set '\(name)' in \(manifest); its rule sets: \(settings.ruleSets.keys.sorted().joined(separator: ", "))")
            }
            let data = requests == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: requests)
            guard let data else { throw fail("cannot read \(requests)") }
            let json: JSONValue
            do {
                json = try JSONValue(jsonData: data)
            } catch {
                throw fail("\(requests) is not JSON: \(error)")
            }
            let test: RuleTest
            do {
                test = try RuleTest(ruleSet: rules, bundleID: game.bundleID, requests: json, extraSeconds: extraSeconds)
            } catch let error as RuleTestError {
                throw fail("\(requests): \(error)")
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            FileHandle.standardOutput.write(try encoder.encode(test.report()) + Data("\n".utf8))
        }

        private func fail(_ message: String) -> ExitCode {
            FileHandle.standardError.write(Data("\(message)\n".utf8))
            return ExitCode.failure
        }
    }
}
