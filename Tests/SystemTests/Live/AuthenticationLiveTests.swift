import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkFaultProxy
import OpenGameKit
import Testing

/// Authentication with real server processes and several devices, on every engine.
@Suite(.serialized, .timeLimit(.minutes(3))) struct AuthenticationLiveTests {
    @Test(arguments: LiveServer.engines)
    func serveAnnouncesWhereItListens(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        #expect(server.firstLines.count == 2)
        #expect(server.firstLines[0] == "listening on http://127.0.0.1:\(server.port)")
        #expect(server.firstLines[1].hasPrefix("udp 127.0.0.1:"))
        #expect(try await server.stop() == 0)
    }

    /// Connections that never send a whole request do not keep SIGTERM from stopping the server (one that sent
    /// nothing used to hold its graceful shutdown open forever).
    @Test func silentAndHalfSentConnectionsDoNotHoldAStop() async throws {
        for firstBytes in ["", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"] {
            let server = try LiveServer(engine: "sqlite")
            try await server.start()
            let connection = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(connection) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(server.port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(connection, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            #expect(connected == 0)
            if !firstBytes.isEmpty { _ = firstBytes.withCString { send(connection, $0, strlen($0), 0) } }
            var local = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(connection, $0, &length) } }
            try await waitUntil("the server took the connection in and read what it sent") {
                Self.serverHasRead(port: server.port, clientPort: Int(UInt16(bigEndian: local.sin_port)))
            }
            #expect(try await server.stop() == 0, "first bytes: \(firstBytes.debugDescription)")
        }
    }

    /// A page's open live notices (server-sent events, which write only when something happens) end cleanly — the
    /// response finishes, the connection is not cut off — when the player signs out on the page, and when the server
    /// stops. Before, a stream never finished its response (the connection was cut at the end of the shutdown
    /// grace), and on SIGTERM it noticed nothing until its next heartbeat (a browser test's server was seen still
    /// running 15 s after SIGTERM).
    @Test func anOpenLiveNoticesStreamEndsOnSignOutAndWhenTheServerStops() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let account = "lena-\(UUID().uuidString.prefix(8).lowercased())"
        _ = try await server.signUp(account: account)

        var signingOut = try await WebAppBrowser.signedIn(to: server.url, account: account, password: "correct horse")
        let ending = try await signingOut.openLiveNotices()
        try #require(try await signingOut.submit("/sign-out", on: "/account", []).status == 303)
        #expect(try await ending.toEnd().hasSuffix("event: signed-out\ndata: {}\n\n"))

        let browser = try await WebAppBrowser.signedIn(to: server.url, account: account, password: "correct horse")
        let stream = try await browser.openLiveNotices()
        async let exitStatus = server.stop()
        #expect(!(try await stream.toEnd()).contains("event: notice"), "nothing happened to the player")
        #expect(try await exitStatus == 0)
    }

    /// Whether the server listening on 127.0.0.1:`port` has accepted the connection from 127.0.0.1:`clientPort` and
    /// read all it was sent, as the kernel's table of TCP sockets (/proc/net/tcp) says: no connection waits in the
    /// listening socket's accept queue, and the server's side of this one holds no unread byte.
    static func serverHasRead(port: Int, clientPort: Int) -> Bool {
        // Read to the end: the kernel hands the table out a page at a time (a single read returns the first page).
        guard let file = FileHandle(forReadingAtPath: "/proc/net/tcp") else { return false }
        defer { try? file.close() }
        let table = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        let server = String(format: "0100007F:%04X", port), client = String(format: "0100007F:%04X", clientPort)
        var acceptQueueEmpty = false, allRead = false
        // Fields: slot, local address, remote address, state (0A: listening), tx_queue:rx_queue, … For a listening
        // socket rx_queue is its accept queue; for a connection, the bytes not read yet.
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 4, fields[1] == server, let queued = fields[4].split(separator: ":").last.flatMap({ Int($0, radix: 16) }) else { continue }
            if fields[3] == "0A" { acceptQueueEmpty = queued == 0 }
            if fields[2] == client { allRead = queued == 0 }
        }
        return acceptQueueEmpty && allRead
    }

    @Test(arguments: LiveServer.engines)
    func signUpThenResumeTheSavedSessionOnARestartedDevice(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let first = Devices.make(server, storage: storage)
        let log = HandlerLog()
        first.localPlayer.authenticateHandler = { log.record($0) }
        #expect(!first.localPlayer.isAuthenticated)
        try await first.localPlayer.authenticate(.signUp(account: "ann-\(UUID().uuidString.prefix(6))", password: "password-1", alias: "Ann"))
        #expect(first.localPlayer.isAuthenticated)
        #expect(first.localPlayer.alias == "Ann")
        #expect(first.localPlayer.playerID.hasPrefix("G:"))
        #expect(log.count == 1 && log.codes == [nil])

        // The saved session is readable by its owner only.
        let file = storage.appendingPathComponent("session.json")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: storage.path)
        #expect((folderAttributes[.posixPermissions] as? Int) == 0o700)

        // The game is restarted: a new device object on the same folder resumes the session.
        let second = Devices.make(server, storage: storage)
        try await second.localPlayer.authenticate(.stored)
        #expect(second.localPlayer.isAuthenticated)
        #expect(second.localPlayer.playerID == first.localPlayer.playerID)
        #expect(second.localPlayer.alias == "Ann")

        // A device with no saved session cannot resume.
        let empty = Devices.make(server)
        let error = await #expect(throws: GKError.self) { try await empty.localPlayer.authenticate(.stored) }
        #expect(error?.code == .notAuthenticated)
        #expect(!empty.localPlayer.isAuthenticated)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func signInOnASecondDeviceAndSignOut(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, account) = try await Devices.signedUp(server, alias: "Ben")
        let tablet = Devices.make(server)
        let wrong = await #expect(throws: GKError.self) {
            try await tablet.localPlayer.authenticate(.signIn(account: account, password: "not-the-password"))
        }
        #expect(wrong?.code == .invalidCredentials)
        #expect(wrong?.message.isEmpty == false)
        try await tablet.localPlayer.authenticate(.signIn(account: account, password: "password-Ben"))
        #expect(tablet.localPlayer.playerID == phone.localPlayer.playerID)

        let log = HandlerLog()
        tablet.localPlayer.authenticateHandler = { log.record($0) }
        await tablet.localPlayer.signOut()
        #expect(!tablet.localPlayer.isAuthenticated)
        #expect(log.count == 1)
        let afterSignOut = await #expect(throws: GKError.self) { try await tablet.localPlayer.authenticate(.stored) }
        #expect(afterSignOut?.code == .notAuthenticated)
        // The phone's session is independent and still works.
        #expect(try await phone.localPlayer.loadFriends() == [])
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func revokingASessionReachesTheOtherDevicesHandler(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, account) = try await Devices.signedUp(server, alias: "Cat")
        let log = HandlerLog()
        phone.localPlayer.authenticateHandler = { log.record($0) }
        let events = phone.events
        let tablet = Devices.make(server)
        try await tablet.localPlayer.authenticate(.signIn(account: account, password: "password-Cat"))

        try await tablet.localPlayer.revokeOtherSessions()
        let reason = try await nextEvent(events) { event -> String? in
            if case .signedOut(let reason) = event { return reason }
            return nil
        }
        #expect(reason.contains("revoked"))
        try await waitUntil("the phone is signed out") { !phone.localPlayer.isAuthenticated }
        try await waitUntil("the handler heard it") { log.codes.last == .notAuthenticated }
        let call = await #expect(throws: GKError.self) { try await phone.localPlayer.loadFriends() }
        #expect(call?.code == .notAuthenticated)
        #expect(tablet.localPlayer.isAuthenticated)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func theServerBeingDownIsACommunicationsFailureButTheSavedPlayerStays(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let device = Devices.make(server, storage: storage)
        try await device.localPlayer.authenticate(.signUp(account: "dan-\(UUID().uuidString.prefix(6))", password: "password-1", alias: "Dan"))
        try await server.stop()

        let restarted = Devices.make(server, storage: storage)
        let log = HandlerLog()
        restarted.localPlayer.authenticateHandler = { log.record($0) }
        let error = await #expect(throws: GKError.self) { try await restarted.localPlayer.authenticate(.stored) }
        #expect(error?.code == .communicationsFailure)
        #expect(restarted.localPlayer.isAuthenticated, "the seed: Game Kit may have cached enough to provide an authenticated player")
        #expect(restarted.localPlayer.alias == "Dan")
        #expect(log.codes == [.communicationsFailure])

        let fresh = Devices.make(server)
        let signUp = await #expect(throws: GKError.self) {
            try await fresh.localPlayer.authenticate(.signUp(account: "x-\(UUID().uuidString.prefix(6))", password: "password-1", alias: "X"))
        }
        #expect(signUp?.code == .communicationsFailure)
        #expect(!fresh.localPlayer.isAuthenticated)
    }

    @Test(arguments: LiveServer.engines)
    func anUnknownGameIsUnrecognized(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let device = Devices.make(server, bundleID: "com.example.unknown")
        let error = await #expect(throws: GKError.self) {
            try await device.localPlayer.authenticate(.signUp(account: "eve-\(UUID().uuidString.prefix(6))", password: "password-1", alias: "Eve"))
        }
        #expect(error?.code == .gameUnrecognized)
        #expect(error?.message.contains("com.example.unknown") == true)
        try await server.stop()
    }

    @Test func anInvalidManifestStopsTheServerFromStarting() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bad-games-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try
            "bundleID: com.example.bad\nname: Bad\nachievements:\n  - { identifier: a, title: { en: T }, unachievedDescription: { en: U }, achievedDescription: { en: A }, points: 500 }\n"
            .write(to: folder.appendingPathComponent("bad.yaml"), atomically: true, encoding: .utf8)
        let server = try LiveServer(engine: "sqlite", games: folder.path)
        await #expect(throws: LiveServerError.self) { try await server.start() }
        try await waitUntil("the server exits") { !(server.process?.isRunning ?? false) }
        #expect(server.process?.terminationStatus != 0)
        #expect(server.errorOutput.contains("bad.yaml"))
        #expect(server.errorOutput.contains("achievements[0].points"))
        #expect(server.errorOutput.contains("1 to 100"))
    }

    @Test func sighupReloadsAnEditedManifestAndKeepsTheData() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("games-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let manifest = folder.appendingPathComponent("game.yaml")
        try "bundleID: com.example.tapper\nname: Before\n".write(to: manifest, atomically: true, encoding: .utf8)
        let server = try LiveServer(engine: "sqlite", games: folder.path)
        try await server.start()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let device = Devices.make(server, storage: storage)
        try await device.localPlayer.authenticate(.signUp(account: "fay-\(UUID().uuidString.prefix(6))", password: "password-1", alias: "Fay"))

        try "bundleID: com.example.tapper\nname: After\n".write(to: manifest, atomically: true, encoding: .utf8)
        server.signal(SIGHUP)
        try await waitUntil("the new name is served") {
            let (data, _) = try await URLSession.shared.data(from: server.url)
            return String(decoding: data, as: UTF8.self).contains("After")
        }
        // A broken edit is refused and the game stays.
        try "bundleID: com.example.tapper\nname: After\nleaderboards: nope\n".write(to: manifest, atomically: true, encoding: .utf8)
        server.signal(SIGHUP)
        try await waitUntil("the server refused the reload") { server.errorOutput.contains("manifest reload refused") }
        let again = Devices.make(server, storage: storage)
        try await again.localPlayer.authenticate(.stored)
        #expect(again.localPlayer.alias == "Fay")
        try await server.stop()
    }
}
