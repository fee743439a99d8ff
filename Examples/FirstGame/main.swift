// The README's "Your first game", as it is printed there: CI builds it and runs it against a live server
// (Tests/OpenGameKitTests/FirstGameExampleTests.swift plays the second player).
import Foundation
import OpenGameKit

let server = URL(string: ProcessInfo.processInfo.environment["GAMECENTER_URL"] ?? "http://127.0.0.1:8080")!
let gameCenter = GKGameCenter(server: server, bundleID: "com.example.tapper")
let me = gameCenter.localPlayer
me.authenticateHandler = { error in
    print(me.isAuthenticated ? "signed in as \(me.alias)" : "signed out: \(String(describing: error))")
}

do {
    try await me.authenticate(.stored)  // the session saved at the last sign-in, if any
} catch {
    try await me.authenticate(.signUp(account: "ann", password: "correct horse", alias: "Ann"))
}

let friendIDs = try await me.loadFriends()
let friends = try await GKPlayer.loadPlayers(forIdentifiers: friendIDs, in: gameCenter)
for friend in friends { print(friend.alias, friend.status ?? "") }

let firstTap = GKAchievement(identifier: "tapper.first", in: gameCenter)
firstTap.percentComplete = 100
do { try await firstTap.report() } catch let error as GKError where error.queued {
    // Offline: the report is kept on this device and sent when the server is back. Nothing to do.
}

let score = GKScore(category: "tapper.taps", in: gameCenter)  // nil category: the default leaderboard
score.value = 42
try await score.report()  // queued like achievements when offline
let board = GKLeaderboard(in: gameCenter)
board.timeScope = .week  // rolling 7 days; .today = rolling 24 hours
board.range = 1...10
for entry in try await board.loadScores() { print(entry.rank, entry.playerID, entry.formattedValue ?? "") }
print("you:", board.localPlayerScore?.rank ?? 0, "of", board.maxRange)

gameCenter.matchmaker.inviteHandler = { invite, friendIDs in  // set it right after authenticating
    if let invite {
        Task {
            let match = try await gameCenter.matchmaker.match(for: invite); print(match.playerIDs)
        }
    }
}
let request = GKMatchRequest(minPlayers: 2, maxPlayers: 4)  // 2…16 players, relayed or hosted
let match = try await gameCenter.matchmaker.findMatch(for: request)
print("in a match with", match.playerIDs)
try match.sendData(toAllPlayers: Data("hello".utf8), with: .reliable)  // queued until the relay has it
Task { for await event in match.events { if case .data(let data, let from) = event { print(from, data.count) } } }

for await event in gameCenter.events {  // pushed by the server, replayed after a disconnect
    if case .friendRequestReceived(let request) = event {
        try await request.accept()
        print("friends with", request.fromAlias)
        break
    }
}
