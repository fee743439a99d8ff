import Foundation
import NetworkFaultProxy
import OpenGameKit
import Testing

/// The directory form of saved games (`GKSavedGameDirectory`) through the SDK against real server processes, on every
/// engine: one device's folder arrives identical on another, an open directory follows the other device, a conflict
/// made by two devices ends in one step either way, a folder finished offline goes up when the server is back, and
/// what could escape the folder or break the game's limits is refused.
@Suite(.serialized, .timeLimit(.minutes(4))) struct SavedGameDirectoryLiveTests {
    /// Every file under `folder`, by relative path.
    static func files(in folder: URL) throws -> [String: Data] {
        var found: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            found[String(url.standardizedFileURL.path.dropFirst(folder.standardizedFileURL.path.count + 1))] = try Data(contentsOf: url)
        }
        return found
    }

    static func write(_ text: String, _ path: String, in directory: GKSavedGameDirectory) throws {
        try write(Data(text.utf8), path, in: directory)
    }

    static func write(_ data: Data, _ path: String, in directory: GKSavedGameDirectory) throws {
        let url = directory.url.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    static func text(_ path: String, in directory: GKSavedGameDirectory) -> String? {
        (try? Data(contentsOf: directory.url.appendingPathComponent(path))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The state's case, without its values: `ready`, `conflicted(2)`, `error(…)`.
    static func describe(_ state: GKSavedGameDirectory.State) -> String {
        switch state {
        case .syncing: "syncing"
        case .ready: "ready"
        case .offline: "offline"
        case .local: "local"
        case .conflicted(let versions): "conflicted(\(versions.count))"
        case .error(let error): "error(\(error.message))"
        case .closed: "closed"
        }
    }

    @Test(arguments: LiveServer.engines)
    func aFolderFinishedOnOneDeviceOpensIdenticalOnAnotherAndAnOpenDirectoryFollowsIt(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, tablet) = try await SavedGamesLiveTests.twoDevices(server)
        let onPhone = try await GKSavedGameDirectory.open(named: "world", in: phone)
        #expect(Self.describe(onPhone.state) == "ready")
        #expect(try Self.files(in: onPhone.url).isEmpty)
        #expect(onPhone.url.path.hasPrefix(phone.storageDirectory.path), "under the game's storage directory")
        let terrain = Data((0..<(5 << 19) + 99).map { UInt8(truncatingIfNeeded: $0 % 251) })
        try Self.write("{\"level\":1}", "level.json", in: onPhone)
        try Self.write(terrain, "maps/1/terrain.bin", in: onPhone)
        try Self.write(Data(), "maps/2/empty", in: onPhone)
        try Self.write("hidden", ".settings", in: onPhone)
        try await onPhone.finishSyncing()
        #expect(Self.describe(onPhone.state) == "ready")
        let sent = try Self.files(in: onPhone.url)
        #expect(sent.count == 4)

        let onTablet = try await GKSavedGameDirectory.open(named: "world", in: tablet)
        #expect(Self.describe(onTablet.state) == "ready")
        #expect(try Self.files(in: onTablet.url) == sent, "identical files")
        let listed = try await tablet.localPlayer.fetchSavedGames()
        #expect(listed.map(\.name) == ["world"] && listed[0].syncState == .synced, "one save, through the usual versions")

        // The phone plays on; the open directory on the tablet, with no changes of its own, fetches it by itself.
        try Self.write("{\"level\":2}", "level.json", in: onPhone)
        try FileManager.default.removeItem(at: onPhone.url.appendingPathComponent("maps/2"))
        try await onPhone.finishSyncing()
        try await waitUntil("the tablet's open directory fetched the phone's new version", within: .seconds(20)) {
            Self.describe(onTablet.state) == "ready" && Self.text("level.json", in: onTablet) == "{\"level\":2}"
        }
        #expect(try Self.files(in: onTablet.url) == (try Self.files(in: onPhone.url)))
        #expect(!FileManager.default.fileExists(atPath: onTablet.url.appendingPathComponent("maps/2/empty").path))
        // Nothing changed: finishing again makes no new version.
        let before = try await phone.localPlayer.fetchSavedGames().map(\.versionID)
        try await onPhone.finishSyncing()
        #expect(try await phone.localPlayer.fetchSavedGames().map(\.versionID) == before)

        // Closed: the states end with `closed`, and every call says so.
        let states = onTablet.states
        await onTablet.close()
        var seen: [String] = []
        for await state in states { seen.append(Self.describe(state)) }
        #expect(seen.last == "closed")
        let closed = await #expect(throws: GKError.self) { try await onTablet.finishSyncing() }
        #expect(closed?.code == .invalidParameter && closed?.message.contains("was closed") == true)
        await onPhone.close()
        await phone.close()
        await tablet.close()
        _ = try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func twoDevicesChangingTheFolderMakeAConflictResolvedInOneStepWithEitherVersion(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, tablet) = try await SavedGamesLiveTests.twoDevices(server)
        let onPhone = try await GKSavedGameDirectory.open(named: "world", in: phone)
        try Self.write("base", "a.txt", in: onPhone)
        try await onPhone.finishSyncing()
        let onTablet = try await GKSavedGameDirectory.open(named: "world", in: tablet)
        #expect(Self.text("a.txt", in: onTablet) == "base")

        // Round 1: the tablet changes its folder without finishing; the phone finishes a change. The tablet keeps its
        // changes and is in conflict: its own changes and the phone's version.
        try Self.write("tablet", "a.txt", in: onTablet)
        try Self.write("phone", "a.txt", in: onPhone)
        try await onPhone.finishSyncing()
        try await waitUntil("the tablet's directory is in conflict", within: .seconds(20)) { Self.describe(onTablet.state) == "conflicted(2)" }
        #expect(Self.text("a.txt", in: onTablet) == "tablet", "the tablet's changes are kept")
        guard case .conflicted(let versions) = onTablet.state else { return }
        let local = try #require(versions.first { $0.syncState == .pending })
        let phones = try #require(versions.first { $0.syncState == .conflicted })
        #expect(local.versionID.hasPrefix("local-"))
        // Each version loads as the folder it would make, packed.
        #expect(try await local.loadData() == Data("OGKDIR 1\n{\"path\":\"a.txt\",\"size\":6}\ntablet".utf8))
        #expect(try await phones.loadData() == Data("OGKDIR 1\n{\"path\":\"a.txt\",\"size\":5}\nphone".utf8))
        let refused = await #expect(throws: GKError.self) { try await onTablet.finishSyncing() }
        #expect(refused?.code == .invalidParameter && refused?.message.contains("resolveConflicts") == true)
        // The tablet takes the phone's version: unpacked into its folder, and the conflict is over everywhere.
        try await onTablet.resolveConflicts(with: phones)
        #expect(Self.describe(onTablet.state) == "ready")
        #expect(Self.text("a.txt", in: onTablet) == "phone")
        let again = await #expect(throws: GKError.self) { try await onTablet.resolveConflicts(with: phones) }
        #expect(again?.code == .invalidParameter && again?.message.contains("not in conflict") == true, "one step: nothing left to resolve")

        // Round 2, the other way: the tablet keeps its own changes.
        try await waitUntil("the phone's directory followed the resolution", within: .seconds(20)) {
            let current = try await phone.localPlayer.fetchSavedGames()
            return Self.describe(onPhone.state) == "ready" && current.count == 1
        }
        try Self.write("tablet again", "a.txt", in: onTablet)
        try Self.write("mine", "b/only-on-tablet.txt", in: onTablet)
        try Self.write("phone again", "a.txt", in: onPhone)
        try await onPhone.finishSyncing()
        try await waitUntil("the tablet's directory is in conflict again", within: .seconds(20)) { Self.describe(onTablet.state) == "conflicted(2)" }
        guard case .conflicted(let second) = onTablet.state else { return }
        try await onTablet.resolveConflicts(with: try #require(second.first { $0.syncState == .pending }))
        #expect(Self.describe(onTablet.state) == "ready")
        try await waitUntil("the phone's directory fetched the tablet's resolution", within: .seconds(20)) {
            Self.describe(onPhone.state) == "ready" && Self.text("a.txt", in: onPhone) == "tablet again"
        }
        #expect(try Self.files(in: onPhone.url) == (try Self.files(in: onTablet.url)))
        let current = try await phone.localPlayer.fetchSavedGames()
        #expect(current.count == 1 && current[0].syncState == .synced, "one current version: no conflict left")
        await onPhone.close()
        await onTablet.close()
        await phone.close()
        await tablet.close()
        _ = try await server.stop()
    }

    @Test func theCompletionHandlerTwinsCallBackOnceWithTheResultOrTheError() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (phone, _) = try await Devices.signedUp(server, alias: "Sam")
        let ledger = CompletionHandlerLiveTests.Ledger()
        let (opened, openError) = try await ledger.once("open", as: (GKSavedGameDirectory?, (any Error)?).self) { calls in
            GKSavedGameDirectory.open(named: "world", in: phone) { calls.add(($0, $1)) }
        }
        #expect(openError == nil)
        let directory = try #require(opened)
        try Self.write("twin", "a.txt", in: directory)
        let finished = try await ledger.once("finishSyncing", as: (any Error)?.self) { calls in directory.finishSyncing { calls.add($0) } }
        #expect(finished == nil)
        let saves = try await phone.localPlayer.fetchSavedGames()
        #expect(saves.map(\.name) == ["world"])
        let notInConflict = try await ledger.once("resolveConflicts", as: (any Error)?.self) { calls in
            directory.resolveConflicts(with: saves[0]) { calls.add($0) }
        }
        #expect((notInConflict as? GKError)?.code == .invalidParameter)
        _ = try await ledger.once("close", as: Void.self) { calls in directory.close { calls.add(()) } }
        #expect(Self.describe(directory.state) == "closed")
        let badName = try await ledger.once("open with a bad name", as: (GKSavedGameDirectory?, (any Error)?).self) { calls in
            GKSavedGameDirectory.open(named: "", in: phone) { calls.add(($0, $1)) }
        }
        #expect(badName.0 == nil && (badName.1 as? GKError)?.code == .invalidParameter)
        #expect(try await ledger.notOnce().isEmpty)
        await phone.close()
        _ = try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aFolderFinishedWhileTheServerIsDownGoesUpWhenItIsBack(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, tablet) = try await SavedGamesLiveTests.twoDevices(server)
        let onPhone = try await GKSavedGameDirectory.open(named: "world", in: phone)
        try Self.write("offline progress", "progress.txt", in: onPhone)
        try await server.stop()
        try await onPhone.finishSyncing()
        #expect(Self.describe(onPhone.state) == "offline")
        let openedOffline = try await GKSavedGameDirectory.open(named: "other", in: phone)
        #expect(Self.describe(openedOffline.state) == "offline", "the local copy is usable")
        await openedOffline.close()

        try await server.start()
        try await waitUntil("the phone's directory went up", within: .seconds(40)) { Self.describe(onPhone.state) == "ready" }
        let onTablet = try await GKSavedGameDirectory.open(named: "world", in: tablet)
        #expect(Self.describe(onTablet.state) == "ready")
        #expect(try Self.files(in: onTablet.url) == ["progress.txt": Data("offline progress".utf8)])
        await onPhone.close()
        await onTablet.close()
        await phone.close()
        await tablet.close()
        _ = try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func linksPathsEscapingTheFolderAndSavesOverTheLimitAreRefusedAndWithoutAPlayerItIsLocal(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, _) = try await Devices.signedUp(server, alias: "Sam")
        let directory = try await GKSavedGameDirectory.open(named: "world", in: phone)

        // A symbolic link, even to a file of the game's, is refused: nothing is uploaded.
        let outside = phone.storageDirectory.appendingPathComponent("outside.txt")
        try Data("outside".utf8).write(to: outside)
        try FileManager.default.createSymbolicLink(at: directory.url.appendingPathComponent("link"), withDestinationURL: outside)
        let linked = await #expect(throws: GKError.self) { try await directory.finishSyncing() }
        #expect(linked?.code == .invalidParameter && linked?.message.contains("symbolic link") == true)
        try FileManager.default.removeItem(at: directory.url.appendingPathComponent("link"))
        #expect(try await phone.localPlayer.fetchSavedGames().isEmpty)

        // Over the game's 32 MiB per save: refused with the numbers, before any upload.
        try Self.write(Data(count: 32 << 20), "huge.bin", in: directory)
        let tooLarge = await #expect(throws: GKError.self) { try await directory.finishSyncing() }
        #expect(tooLarge?.code == .invalidParameter && tooLarge?.message.contains("33554432") == true, "\(String(describing: tooLarge))")
        try FileManager.default.removeItem(at: directory.url.appendingPathComponent("huge.bin"))
        #expect(try await phone.localPlayer.fetchSavedGames().isEmpty)

        // A save whose pack names a path outside the folder (made by hand, not by the SDK) is refused when opened,
        // and nothing is written outside the folder.
        let evil = Data("OGKDIR 1\n{\"path\":\"../../escaped.txt\",\"size\":2}\nhi".utf8)
        _ = try await phone.localPlayer.saveGameData(evil, withName: "evil")
        let opened = try await GKSavedGameDirectory.open(named: "evil", in: phone)
        #expect(Self.describe(opened.state).contains("not allowed"), "\(Self.describe(opened.state))")
        #expect(try Self.files(in: opened.url).isEmpty)
        let home = opened.url.deletingLastPathComponent()
        #expect(!FileManager.default.fileExists(atPath: home.deletingLastPathComponent().appendingPathComponent("escaped.txt").path))
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("escaped.txt").path))
        await opened.close()

        // Bad names.
        let empty = await #expect(throws: GKError.self) { try await GKSavedGameDirectory.open(named: "", in: phone) }
        #expect(empty?.code == .invalidParameter && empty?.message.contains("1 to 255 characters") == true)

        // No player signed in: a local folder, never uploaded.
        let signedOut = Devices.make(server)
        let local = try await GKSavedGameDirectory.open(named: "world", in: signedOut)
        #expect(Self.describe(local.state) == "local")
        try Self.write("local", "a.txt", in: local)
        let notSignedIn = await #expect(throws: GKError.self) { try await local.finishSyncing() }
        #expect(notSignedIn?.code == .notAuthenticated)
        await local.close()
        await directory.close()
        await phone.close()
        _ = try await server.stop()
    }
}
