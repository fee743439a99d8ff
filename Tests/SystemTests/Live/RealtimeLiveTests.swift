import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GameCenterProtocol
import HTTPTypes
import HummingbirdWSClient
import Logging
import NetworkFaultProxy
@testable import OpenGameKit
import Synchronization
import Testing

/// The realtime channel's liveness rules, seen from a raw WebSocket client and from SDK devices.
@Suite(.serialized, .timeLimit(.minutes(3))) struct RealtimeLiveTests {
    /// Signs up over HTTP with the SDK and returns the device and its saved token.
    func signedUpToken(_ server: LiveServer) async throws -> (GKGameCenter, String) {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let device = Devices.make(server, storage: storage)
        try await device.localPlayer.authenticate(.signUp(account: "rt-\(UUID().uuidString.prefix(8))", password: "password-1", alias: "RT"))
        let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: storage.appendingPathComponent("session.json"))) as? [String: Any]
        return (device, try #require(saved?["token"] as? String))
    }

    @Test func aClientThatStopsAnsweringHeartbeatsIsDisconnected() async throws {
        let server = try LiveServer(engine: "sqlite")
        server.heartbeatSeconds = 1
        try await server.start()
        let (device, token) = try await signedUpToken(server)
        await device.close()
        var headers = HTTPFields()
        headers[HTTPField.Name(DeviceHeader.bundleID)!] = "com.example.tapper"
        headers[HTTPField.Name(DeviceHeader.environment)!] = "sandbox"
        headers[.authorization] = "Bearer \(token)"
        let frames = Mutex<[String]>([])
        let started = ContinuousClock.now
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(server.port)/v1/realtime", configuration: .init(additionalHeaders: headers), logger: Logger(label: "test")
        ) { inbound, _, _ in
            // Read everything, answer nothing.
            for try await message in inbound.messages(maxSize: 1 << 16) {
                if case .text(let text) = message { frames.withLock { $0.append(text) } }
            }
        }
        let elapsed = ContinuousClock.now - started
        let received = frames.withLock { $0 }
        #expect(received.first?.contains("hello") == true)
        #expect(received.filter { $0.contains("heartbeat") }.count >= 2, "heartbeats were sent before giving up")
        #expect(elapsed < .seconds(10), "closed after about three silent heartbeat intervals (1 s each), took \(elapsed)")
        try await server.stop()
    }

    /// A device that stops reading (here: it floods pings and never reads the pongs, so its socket fills) is closed
    /// within the stated time while other devices are served: by the silence check (no heartbeat answered for three
    /// intervals) or, when a write to it cannot finish, by the write deadline (three intervals, at least 10 s). With Hummingbird 2.28
    /// the writes to a full socket are buffered rather than suspended, so the silence check is what closes it here.
    @Test func aDeviceThatStopsReadingIsClosedAndOthersAreServed() async throws {
        let server = try LiveServer(engine: "sqlite")
        server.heartbeatSeconds = 1
        try await server.start()
        let (device, token) = try await signedUpToken(server)
        await device.close()
        let opened = try RawTCPConnection.openRealtime(port: server.port, token: token, receiveBuffer: 4096)
        #expect(opened.status == 101)
        let stuck = opened.connection
        // Masked pings of 125 bytes, 64 KiB at a time, until 16 MiB went out or the server stops taking them.
        var ping: [UInt8] = [0x89, 0x80 | 125, 1, 2, 3, 4]
        ping += (0..<125).map { UInt8($0 % 7) ^ [1, 2, 3, 4][$0 % 4] }
        let chunk = Array((0..<(65536 / ping.count)).map { _ in ping }.joined())
        var sent = 0
        while sent < 16 << 20, stuck.send(chunk) { sent += chunk.count }

        // Meanwhile another device is told of what happens to it.
        let (other, _) = try await Devices.signedUp(server, alias: "Other")
        let (friend, _) = try await Devices.signedUp(server, alias: "Friend")
        try await GKFriendRequest.send(to: [other.localPlayer.playerID], message: nil, in: friend)
        try await waitUntil("the other device hears its friend request") { try await !GKFriendRequest.loadPending(in: other).isEmpty }

        // Heartbeats every 1 s: closed after 3 s of silence (or 10 s into a write that cannot finish).
        let (_, closed) = stuck.readUntilClosed(within: .seconds(30))
        #expect(closed, "the server closed the connection of the device that stopped reading (after \(sent) bytes of pings)")
        let (_, health) = try await URLSession.shared.data(from: server.url.appendingPathComponent("healthz"))
        #expect((health as? HTTPURLResponse)?.statusCode == 200)
        try await server.stop()
    }

    /// A session revoked between the check at the channel's upgrade (answered from the server's session cache) and the
    /// channel's subscription to notices is told at once, not left open: here it is revoked in storage behind the
    /// server's back, so no notice is ever sent, and the cache still holds it when the channel opens.
    @Test func aChannelOpenedWithARevokedSessionIsToldItEnded() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let server = try LiveServer(engine: "postgres")
        server.heartbeatSeconds = 1
        try await server.start()
        let (device, token) = try await signedUpToken(server)
        let playerID = device.localPlayer.playerID
        await device.close()
        #expect(try await ClusterLiveTests.status(.GET, "v1/friends", on: server, token: token) == 200, "the server caches the session")
        try ClusterLiveTests.psql(server.database, "UPDATE sessions SET revoked_at = 1 WHERE player_id = '\(playerID)'")
        var headers = HTTPFields()
        headers[HTTPField.Name(DeviceHeader.bundleID)!] = "com.example.tapper"
        headers[HTTPField.Name(DeviceHeader.environment)!] = "sandbox"
        headers[.authorization] = "Bearer \(token)"
        let frames = Mutex<[String]>([])
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(server.port)/v1/realtime", configuration: .init(additionalHeaders: headers), logger: Logger(label: "test")
        ) { inbound, _, _ in
            for try await message in inbound.messages(maxSize: 1 << 16) {
                if case .text(let text) = message { frames.withLock { $0.append(text) } }
            }
        }
        let received = frames.withLock { $0 }
        #expect(received.first?.contains("hello") == true, "the upgrade was accepted from the cache: \(received)")
        #expect(received.contains { $0.contains("sessionEnded") }, "the channel was told its session ended: \(received)")
        try await server.stop()
    }

    @Test func aForgedTokenCannotOpenTheChannel() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        var headers = HTTPFields()
        headers[HTTPField.Name(DeviceHeader.bundleID)!] = "com.example.tapper"
        headers[HTTPField.Name(DeviceHeader.environment)!] = "sandbox"
        headers[.authorization] = "Bearer gct_forged"
        let opened = Mutex(false)
        await #expect(throws: (any Error).self) {
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(server.port)/v1/realtime", configuration: .init(additionalHeaders: headers), logger: Logger(label: "test")
            ) { _, _, _ in opened.withLock { $0 = true } }
        }
        #expect(opened.withLock { $0 } == false)
        try await server.stop()
    }

    @Test func anExpiredSessionReachesTheAuthenticateHandler() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start(extraArguments: ["--session-lifetime", "2"])
        let (device, _) = try await Devices.signedUp(server, alias: "Exp")
        let log = HandlerLog()
        device.localPlayer.authenticateHandler = { log.record($0) }
        try await waitUntil("the session expires on its own", within: .seconds(8)) { !device.localPlayer.isAuthenticated }
        try await waitUntil("the handler heard it") { log.codes.last == .notAuthenticated }
        try await server.stop()
    }

    @Test func aSecondAuthenticationWhileOneRunsIsRefused() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let device = Devices.make(server)
        async let first: Void = device.localPlayer.authenticate(.signUp(account: "par-\(UUID().uuidString.prefix(8))", password: "password-1", alias: "P"))
        // Once it has finished, a second one would no longer be refused: then the check below says so.
        try await waitUntil("the first authentication is under way") {
            device.state.withLock { $0.authenticating } || device.localPlayer.isAuthenticated
        }
        let second = await #expect(throws: GKError.self) {
            try await device.localPlayer.authenticate(.signIn(account: "par-none", password: "password-1"))
        }
        #expect(second?.code == .authenticationInProgress)
        try await first
        #expect(device.localPlayer.isAuthenticated)
        try await server.stop()
    }
}
