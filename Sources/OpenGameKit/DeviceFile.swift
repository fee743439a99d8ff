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

/// How often the device's players dismissed the standard sign-in that ``GKLocalPlayer/authenticate()`` starts, in any
/// game, since one last signed in: at ``GKLocalPlayer/signInDismissalsBeforeOptOut`` the player has opted out of Game
/// Center on this device, for every game (the seed: "Game Kit handles opting out of Game Center across all games").
struct DeviceSignInOptOut: Codable, Sendable, Equatable {
    var dismissals: Int
}

/// Reads and changes one value shared by every game on the device, for one server and environment, in
/// `deviceDirectory/NAME-ENVIRONMENT-SERVER.json` (owner-only), under an exclusive `flock` so that games running at
/// once on the device never lose each other's changes.
struct DeviceFile<Value: Codable & Sendable>: Sendable {
    let url: URL

    init(_ name: String, directory: URL, server: URL, environment: GKEnvironment) {
        let serverName = server.absoluteString.map { $0.isLetter || $0.isNumber ? $0 : "_" }
        url = directory.appendingPathComponent("\(name)-\(environment.rawValue)-\(String(serverName)).json")
    }

    /// The value, if there is one.
    func load() -> Value? {
        withLock { read() }
    }

    /// Changes the value (nil: there is none) and returns the result. `flushed`: on disk before this returns (see
    /// ``DurableFile/write(_:to:permissions:flushed:)``).
    @discardableResult
    func update(flushed: Bool = true, _ change: (inout Value?) -> Void) -> Value? {
        withLock {
            var value = read()
            change(&value)
            if let value, let data = try? WireCoding.makeEncoder().encode(value) {
                try? DurableFile.write(data, to: url, flushed: flushed)
            } else if value == nil {
                try? FileManager.default.removeItem(at: url)
            }
            return value
        }
    }

    private func read() -> Value? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? WireCoding.makeDecoder().decode(Value.self, from: data)
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
