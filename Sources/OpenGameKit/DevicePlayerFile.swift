#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GameCenterProtocol

/// The player signed in on this device for one server and environment, shared by every game on the device (the
/// seed: one player per device, for all games), with each game's session so that signing out in one game ends them
/// all.
struct DevicePlayer: Codable, Sendable, Equatable {
    /// One game's session of the device's player.
    struct GameSession: Codable, Sendable, Equatable {
        var token: String
        var sessionID: String
    }

    var playerID: String
    /// Sessions by bundle id.
    var sessions: [String: GameSession]
}

/// Reads and changes ``DevicePlayer`` in `deviceDirectory/player-ENVIRONMENT-SERVER.json` (owner-only), under an
/// exclusive `flock` so that games running at once on the device never lose each other's changes.
struct DevicePlayerFile: Sendable {
    let url: URL

    init(directory: URL, server: URL, environment: GKEnvironment) {
        let serverName = server.absoluteString.map { $0.isLetter || $0.isNumber ? $0 : "_" }
        url = directory.appendingPathComponent("player-\(environment.rawValue)-\(String(serverName)).json")
    }

    /// The device's player, if one is signed in.
    func load() -> DevicePlayer? {
        withLock { read() }
    }

    /// Changes the device's player (nil: nobody is signed in) and returns the result.
    @discardableResult
    func update(_ change: (inout DevicePlayer?) -> Void) -> DevicePlayer? {
        withLock {
            var player = read()
            change(&player)
            if let player, let data = try? WireCoding.makeEncoder().encode(player) {
                try? DurableFile.write(data, to: url)
            } else if player == nil {
                try? FileManager.default.removeItem(at: url)
            }
            return player
        }
    }

    private func read() -> DevicePlayer? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? WireCoding.makeDecoder().decode(DevicePlayer.self, from: data)
    }

    private func withLock<T>(_ body: () -> T) -> T {
        let directory = url.deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let descriptor = open(url.path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return body() }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(descriptor, LOCK_UN) }
        return body()
    }
}
