import Foundation
import OpenGameKit
import Synchronization

/// A test member of a relayed match, for the two-host direct-path test: signs up, finds a match of `--players`, and
/// sends numbered reliable messages (every 10 ms) and unreliable ones (every 20 ms) to everyone until the test asks it
/// to stop; then it tells the others how many it sent, waits for theirs, and exits 0 if every reliable message from
/// every other member arrived once and in order.
///
///     MatchProbe --server http://169.254.77.1:8080 --game com.example.direct --name P1 --players 3 --folder DIR
///
/// It talks to the test through files in `--folder`: `NAME.id` (its player id, once signed in), `NAME.ready` (once
/// the match formed and every member is connected), `NAME.direct` (the player ids it reaches directly now, rewritten
/// every 100 ms); it stops sending when `stop` appears. Lines on standard output say what happened.
@main
enum MatchProbe {
    static let usage = "usage: MatchProbe --server URL --game BUNDLE --name NAME --players N --folder DIR [--relay-only] [--timeout SECONDS]"

    static func main() async {
        let options: Options
        do {
            options = try Options(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("\(error.problem)\n\(usage)\n".utf8))
            exit(2)
        }
        let deadline = ContinuousClock.now + .seconds(options.timeout)
        do {
            let ok = try await run(options, deadline: deadline)
            exit(ok ? 0 : 1)
        } catch {
            say("error: \(error)")
            exit(1)
        }
    }

    static func run(_ options: Options, deadline: ContinuousClock.Instant) async throws -> Bool {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("match-probe-\(UUID().uuidString)")
        let device = GKGameCenter(
            server: options.server, bundleID: options.game, environment: .sandbox, storageDirectory: storage,
            restrictionsFile: storage.appendingPathComponent("restrictions.json"))
        defer { try? FileManager.default.removeItem(at: storage) }
        // The server may still be starting.
        let account = "\(options.name.lowercased())-\(UUID().uuidString.prefix(8).lowercased())"
        while true {
            do {
                try await device.localPlayer.authenticate(.signUp(account: account, password: "password-\(options.name)", alias: options.name, underage: false))
                break
            } catch let error as GKError where error.code == .communicationsFailure && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let me = device.localPlayer.playerID
        try write(me, to: options.file("\(options.name).id"))
        say("\(options.name) is \(me)")

        let request = GKMatchRequest(minPlayers: options.players, maxPlayers: options.players)
        request.relayOnly = options.relayOnly
        let match = try await device.matchmaker.findMatch(for: request)
        let inbox = Inbox()
        let events = match.events
        let listener = Task { for await event in events { inbox.take(event) } }
        while match.playerIDs.count < options.players - 1 {
            guard ContinuousClock.now < deadline else { throw ProbeError("the others did not all connect") }
            try await Task.sleep(for: .milliseconds(20))
        }
        say("match \(match.matchID) with \(match.playerIDs.sorted())")
        try write("", to: options.file("\(options.name).ready"))

        // Sends until told to stop, and says which paths are direct.
        var sent = 0
        var tick = 0
        var lastDirect: [String]?
        let started = ContinuousClock.now
        while !FileManager.default.fileExists(atPath: options.file("stop").path) {
            guard ContinuousClock.now < deadline else { throw ProbeError("the test never said stop") }
            do {
                try match.sendData(toAllPlayers: Data("R|\(me)|\(sent)".utf8), with: .reliable)
                sent += 1
            } catch let error as GKError where error.code == .communicationsFailure {
                // Over the send limit or too much unconfirmed: try again on the next tick.
            }
            if tick % 2 == 0 { try? match.sendData(toAllPlayers: Data("U|\(me)|\(tick)".utf8), with: .unreliable) }
            if tick % 10 == 0 {
                let direct = match.directPlayerIDs
                try write(direct.joined(separator: "\n"), to: options.file("\(options.name).direct"))
                if direct != lastDirect {
                    say(String(format: "%.2f s: direct to %@", (ContinuousClock.now - started).seconds, direct.description))
                    lastDirect = direct
                }
            }
            tick += 1
            try await Task.sleep(for: .milliseconds(10))
        }

        // Each member says how many it sent; waits for everyone's count and messages.
        try match.sendData(toAllPlayers: Data("END|\(me)|\(sent)".utf8), with: .reliable)
        let others = match.playerIDs
        while !inbox.complete(from: others) {
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let ok = inbox.complete(from: others) && inbox.errors.isEmpty
        say("summary: sent \(sent); \(inbox.summary(others)); errors \(inbox.errors.isEmpty ? "none" : inbox.errors.prefix(5).joined(separator: "; "))")
        // The others may still be waiting for this device's last messages.
        try await Task.sleep(for: .seconds(1))
        listener.cancel()
        await device.close()
        return ok
    }

    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func write(_ text: String, to file: URL) throws {
        try Data(text.utf8).write(to: file, options: .atomic)
    }

    struct ProbeError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    struct Options: Sendable {
        /// What is wrong with the command line.
        struct Invalid: Error {
            var problem: String
        }

        var server = URL(string: "http://127.0.0.1:8080")!
        var game = ""
        var name = ""
        var players = 2
        var folder = URL(fileURLWithPath: "/tmp")
        var relayOnly = false
        var timeout = 120.0

        func file(_ name: String) -> URL { folder.appendingPathComponent(name) }

        init(_ arguments: [String]) throws(Invalid) {
            var rest = arguments[...]
            func value(of option: String) throws(Invalid) -> String {
                guard let value = rest.popFirst() else { throw Invalid(problem: "\(option) needs a value") }
                return value
            }
            while let argument = rest.popFirst() {
                switch argument {
                case "--server":
                    guard let url = URL(string: try value(of: argument)) else { throw Invalid(problem: "--server needs a URL") }
                    server = url
                case "--game": game = try value(of: argument)
                case "--name": name = try value(of: argument)
                case "--players":
                    guard let count = Int(try value(of: argument)), (2...16).contains(count) else { throw Invalid(problem: "--players needs 2 to 16") }
                    players = count
                case "--folder": folder = URL(fileURLWithPath: try value(of: argument))
                case "--relay-only": relayOnly = true
                case "--timeout":
                    guard let seconds = Double(try value(of: argument)), seconds > 0 else { throw Invalid(problem: "--timeout needs positive seconds") }
                    timeout = seconds
                default: throw Invalid(problem: "unknown argument \(argument)")
                }
            }
            guard !game.isEmpty, !name.isEmpty else { throw Invalid(problem: "--game and --name are required") }
        }
    }
}

/// What arrived: each sender's reliable messages must come once and in order; `END` says how many there were.
final class Inbox: Sendable {
    private struct State {
        var next: [String: Int] = [:]
        var ends: [String: Int] = [:]
        var unreliable: [String: Int] = [:]
        var errors: [String] = []
    }

    private let state = Mutex(State())

    func take(_ event: GKMatchEvent) {
        guard case .data(let data, let player) = event else { return }
        let parts = String(decoding: data, as: UTF8.self).split(separator: "|").map(String.init)
        guard parts.count == 3, parts[1] == player, let number = Int(parts[2]) else {
            state.withLock { $0.errors.append("unexpected message from \(player)") }
            return
        }
        state.withLock { state in
            switch parts[0] {
            case "R":
                let expected = state.next[player, default: 0]
                if number != expected { state.errors.append("from \(player): \(number) where \(expected) was due") }
                state.next[player] = max(expected, number + 1)
            case "END":
                state.ends[player] = number
            default:
                state.unreliable[player, default: 0] += 1
            }
        }
    }

    var errors: [String] { state.withLock { $0.errors } }

    func complete(from players: [String]) -> Bool {
        state.withLock { state in players.allSatisfy { player in state.ends[player].map { state.next[player, default: 0] == $0 } ?? false } }
    }

    func summary(_ players: [String]) -> String {
        state.withLock { state in
            players.sorted().map { player in
                "from \(player): reliable \(state.next[player, default: 0])/\(state.ends[player].map(String.init) ?? "?") in order, unreliable \(state.unreliable[player, default: 0])"
            }.joined(separator: ", ")
        }
    }
}

extension Duration {
    fileprivate var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
