// Turn-based tic-tac-toe for two terminals: each player runs it, they meet by auto-match, and each plays when it is
// their turn, whether or not the other's game is still running. CI plays it with two processes (`--auto`).
//
//   swift run TicTacToe --account ann          # terminal 1: type a square 1-9 on your turn
//   swift run TicTacToe --account bob --auto   # terminal 2: plays the first free square
import Foundation
import OpenGameKit

let arguments = CommandLine.arguments
func option(_ name: String) -> String? { arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil } }
let account = option("--account") ?? "player"
let auto = arguments.contains("--auto")

let server = URL(string: ProcessInfo.processInfo.environment["GAMECENTER_URL"] ?? "http://127.0.0.1:8080")!
let gameCenter = GKGameCenter(server: server, bundleID: "com.example.tapper")
let me = gameCenter.localPlayer
do {
    try await me.authenticate(.stored)
} catch {
    try await me.authenticate(.signUp(account: account, password: "password-\(account)", alias: account.capitalized))
}
let events = gameCenter.events  // subscribed before anything can happen

/// Prints at once, also into a pipe.
func say(_ text: String, terminator: String = "\n") { FileHandle.standardOutput.write(Data((text + terminator).utf8)) }

/// The board is the match data: nine bytes, "." for free, "X" (the first seat) or "O".
func board(of match: GKTurnBasedMatch) async throws -> [Character] {
    let data = try await match.loadMatchData() ?? Data(".........".utf8)
    return Array(String(decoding: data, as: UTF8.self))
}

func show(_ board: [Character]) {
    for row in 0..<3 { say(" " + board[row * 3..<row * 3 + 3].map(String.init).joined(separator: " | ")) }
}

func winner(_ board: [Character]) -> Character? {
    let lines = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]]
    return lines.first { line in board[line[0]] != "." && line.allSatisfy { board[$0] == board[line[0]] } }.map { board[$0[0]] }
}

func move(on board: [Character]) -> Int {
    if auto { return board.firstIndex(of: ".")! }
    while true {
        say("your move (1-9): ", terminator: "")
        if let line = readLine(), let square = Int(line), (1...9).contains(square), board[square - 1] == "." { return square - 1 }
    }
}

let request = GKMatchRequest(minPlayers: 2, maxPlayers: 2)
request.playerGroup = 3  // tic-tac-toe players only
var match = try await GKTurnBasedMatch.find(for: request, in: gameCenter)
say("in match \(match.matchID) as \(me.alias)")

while true {
    match = try await GKTurnBasedMatch.load(withID: match.matchID, in: gameCenter)
    if match.status == .ended {
        let mine = match.participants.first { $0.playerID == me.playerID }?.matchOutcome ?? .none
        show(try await board(of: match))
        say(mine == .won ? "you won" : mine == .lost ? "you lost" : mine == .tied ? "a draw" : "the match ended")
        try await match.remove()
        break
    }
    if match.currentParticipant?.playerID == me.playerID {
        var squares = try await board(of: match)
        let mark: Character = match.participants.first?.playerID == me.playerID ? "X" : "O"
        show(squares)
        squares[move(on: squares)] = mark
        let data = Data(String(squares).utf8)
        let opponent = match.participants.first { $0.playerID != me.playerID }!
        if winner(squares) != nil || !squares.contains(".") {
            for participant in match.participants {
                participant.matchOutcome = winner(squares) == nil ? .tied : participant.playerID == me.playerID ? .won : .lost
            }
            try await match.endMatchInTurn(withMatch: data)
        } else {
            match.setLocalizableMessageWithKey("%@ played", arguments: [me.alias])
            try await match.endTurn(withNextParticipants: [opponent], turnTimeout: GKTurnTimeoutDefault, match: data)
        }
        continue
    }
    // Not our turn: wait until the server says something changed in this match (pushed, or replayed on reconnect).
    say("waiting for the other player")
    for await event in events {
        if case .turnBased(let change) = event, change.matchID == match.matchID, change.kind != .turnSaved { break }
    }
}
