import ArgumentParser
import Foundation
import GameCenterProtocol
import OpenGameKit

/// SDK devices signed up on a bench server and matched into matches of `players`, every member in the voice
/// channel `VoiceMatches.channel`, listening, with the UDP path to the relay open.
struct VoiceMatches {
    /// The voice channel every member is in.
    static let channel = "bench"

    /// The signed-up devices.
    let devices: [GKGameCenter]
    /// Each match as its members' `GKMatch` objects.
    let matches: [[GKMatch]]

    /// Signs up `matches × players` devices named by `tag`, matches them and puts everyone in the channel, listening.
    static func form(server: BenchServer, bundleID: String, matches count: Int, players: Int, tag: String) async throws -> VoiceMatches {
        let url = URL(string: "http://127.0.0.1:\(server.port)")!
        let run = UUID().uuidString.prefix(6).lowercased()
        let devices = try await withThrowingTaskGroup(of: GKGameCenter.self) { group in
            for index in 0..<count * players {
                group.addTask {
                    let device = GKGameCenter(
                        server: url, bundleID: bundleID, environment: .sandbox,
                        storageDirectory: server.folder.appendingPathComponent("voice-\(tag)-\(index)"))
                    try await device.localPlayer.authenticate(
                        .signUp(
                            account: "voice-\(tag)-\(index)-\(run)", password: "password-\(index)",
                            alias: "Voice \(index)", underage: false))
                    return device
                }
            }
            return try await group.reduce(into: [GKGameCenter]()) { $0.append($1) }
        }
        let request = GKMatchRequest(minPlayers: players, maxPlayers: players)
        let found = try await withThrowingTaskGroup(of: GKMatch.self) { group in
            for device in devices { group.addTask { try await device.matchmaker.findMatch(for: request) } }
            return try await group.reduce(into: [GKMatch]()) { $0.append($1) }
        }
        let grouped = Dictionary(grouping: found, by: \.matchID).values.map { $0 }
        guard grouped.count == count, grouped.allSatisfy({ $0.count == players }) else {
            throw ValidationError("matchmaking formed \(grouped.map(\.count)) instead of \(count) matches of \(players)")
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while found.contains(where: { $0.expectedPlayerCount > 0 }) {
            guard ContinuousClock.now < deadline else { throw ValidationError("the players did not all connect to the relay") }
            try await Task.sleep(for: .milliseconds(20))
        }
        let formed = VoiceMatches(devices: devices, matches: grouped)
        try await formed.setEveryone(.listening)
        // Lets every device's UDP probes be answered, so the measurements run over UDP.
        try await Task.sleep(for: .seconds(2.5))
        return formed
    }

    /// Puts every member in the channel as `membership` and waits until every member sees the others so.
    func setEveryone(_ membership: VoiceChannelMembership) async throws {
        for match in matches.joined() { try match.voice.setChannel(Self.channel, membership) }
        let others = matches[0].count - 1
        try await waitUntil { match in match.voice.members(of: Self.channel).values.filter { $0 == membership }.count == others }
    }

    /// Waits (at most 10 s) until `ready` holds for every member.
    func waitUntil(_ ready: (GKMatch) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !matches.joined().allSatisfy(ready) {
            guard ContinuousClock.now < deadline else { throw ValidationError("the voice channel memberships did not reach every member") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Leaves every match.
    func disconnect() {
        for match in matches.joined() { match.disconnect() }
    }
}
