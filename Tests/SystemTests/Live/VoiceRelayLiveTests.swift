import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GameCenterProtocol
import NetworkFaultProxy
@testable import OpenGameKit
import OpenGameKitVoice
import Synchronization
import Testing

/// Voice channels through the relay, with SDK devices against a real server: who receives a channel's voice,
/// stopping a channel (the relay withholds it), membership as every device sees it, parental controls, and the
/// WebSocket path when UDP is blocked. The payloads are opaque to the relay; the audio itself is tested in
/// OpenGameKitVoiceTests.
@Suite(.serialized, .timeLimit(.minutes(3))) struct VoiceRelayLiveTests {
    /// Everything a match's voice observer heard.
    final class VoiceInbox: @unchecked Sendable {
        private let lock = NSLock()
        private var packets: [(channel: String, payload: String, from: String)] = []
        private var memberships: [(channel: String, player: String, VoiceChannelMembership)] = []

        init(_ match: GKMatch) {
            _ = match.voice.observe { [self] event in
                lock.withLock {
                    switch event {
                    case .packet(let channel, let payload, let from): packets.append((channel, String(decoding: payload, as: UTF8.self), from))
                    case .membership(let channel, let player, let membership): memberships.append((channel, player, membership))
                    case .memberLeft, .ended: break
                    }
                }
            }
        }

        func payloads(on channel: String, from player: String) -> [String] {
            lock.withLock { packets.filter { $0.channel == channel && $0.from == player }.map(\.payload) }
        }

        var count: Int { lock.withLock { packets.count } }
    }

    static func talk(_ match: GKMatch, on channel: String, tag: String, count: Int) async throws {
        for i in 0..<count {
            try match.voice.send(Data("\(tag):\(i)".utf8), on: channel)
            // 20 ms frames, as a speaking device sends them (the relay's voice limit is 200 a second).
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func aChannelsVoiceReachesTheMembersReceivingItAndStoppingWithholdsIt() async throws {
        let server = try await RelayLiveTests.server()
        let (devices, matches) = try await RelayLiveTests.match(Array(repeating: server.url, count: 4))
        let ids = devices.map(RelayLiveTests.id)
        let inboxes = matches.map(VoiceInbox.init)
        try matches[0].voice.setChannel("team", .joined)
        try matches[1].voice.setChannel("team", .listening)
        try matches[2].voice.setChannel("team", .joined)
        try matches[3].voice.setChannel("other", .listening)
        // Every device sees the channel's members as the relay has them.
        try await waitUntil("B sees A and C in the team channel") {
            matches[1].voice.members(of: "team") == [ids[0]: .joined, ids[2]: .joined]
        }
        try await waitUntil("A sees B listening and C in the team channel") {
            matches[0].voice.members(of: "team") == [ids[1]: .listening, ids[2]: .joined]
        }
        #expect(matches[3].voice.members(of: "other").isEmpty)
        // Voice goes by datagram, as it does in a real match.
        try await RelayLiveTests.udpConfirmed(matches)

        try await Self.talk(matches[0], on: "team", tag: "a", count: 50)
        // All 50 (datagrams on loopback are not lost): the relay has dealt with every one of A's packets.
        try await waitUntil("B heard all of A's packets") { inboxes[1].payloads(on: "team", from: ids[0]).count == 50 }
        // The counters say what the relay did with them (it counts before it sends): each went to B and was withheld
        // from C; had it sent any to C, D or A, more than 50 would have been forwarded.
        var counters = try await RelayLiveTests.statistics(server)
        #expect(counters["voiceForwarded"] == 50, "the relay forwarded A's voice to someone besides B")
        #expect(counters["voiceWithheld"] == 50, "C stopped the channel: all 50 withheld from C")
        #expect(inboxes[2].count == 0, "C stopped the channel and still received its voice")
        #expect(inboxes[3].count == 0, "D is in another channel and received this one")
        #expect(inboxes[0].count == 0, "A heard itself")
        let heard = inboxes[1].payloads(on: "team", from: ids[0])
        #expect(Set(heard).count == heard.count, "a voice packet arrived twice")

        // B stops the channel: the relay stops sending it, and counts what it withheld.
        try matches[1].voice.setChannel("team", .joined)
        try await waitUntil("A sees B stopped") { matches[0].voice.members(of: "team")[ids[1]] == .joined }
        counters = try await RelayLiveTests.statistics(server)
        let forwardedBefore = counters["voiceForwarded"] ?? 0
        let withheldBefore = counters["voiceWithheld"] ?? 0
        let heardBefore = inboxes[1].count
        try await Self.talk(matches[0], on: "team", tag: "b", count: 50)
        // Withheld from B and C, and counted: a packet the relay forwarded instead would show in `voiceForwarded`.
        try await waitUntil("the relay withheld A's packets from B and C (two members, 50 packets each)") {
            counters = try await RelayLiveTests.statistics(server)
            return (counters["voiceWithheld"] ?? 0) - withheldBefore >= 100
        }
        #expect(counters["voiceForwarded"] == forwardedBefore, "the relay forwarded voice after B stopped the channel")
        #expect(inboxes[1].count == heardBefore, "B stopped the channel and still received its voice")

        // A member who leaves the match leaves its channels for everyone.
        matches[2].disconnect()
        try await waitUntil("A sees C gone from the channel") { matches[0].voice.members(of: "team")[ids[2]] == nil }
        try await server.stop()
    }

    @Test func theSDKRefusesWhatTheRelayWouldRefuse() async throws {
        let server = try await RelayLiveTests.server()
        let (_, matches) = try await RelayLiveTests.match([server.url, server.url])
        #expect(throws: GKError.self) { try matches[0].voice.send(Data("x".utf8), on: "never joined") }
        #expect(throws: GKError.self) { try matches[0].voice.setChannel("", .joined) }
        #expect(throws: GKError.self) { try matches[0].voice.setChannel(String(repeating: "x", count: 33), .joined) }
        try matches[0].voice.setChannel("team", .joined)
        #expect(throws: GKError.self) { try matches[0].voice.send(Data(count: VoiceLimits.maximumPayloadBytes + 1), on: "team") }
        for channel in 1..<VoiceLimits.maximumChannelsPerMember { try matches[0].voice.setChannel("c\(channel)", .joined) }
        #expect(throws: GKError.self) { try matches[0].voice.setChannel("ninth", .joined) }
        try await server.stop()
    }

    @Test func anUnderagePlayerIsRefusedVoiceByParentalControls() async throws {
        let server = try await RelayLiveTests.server()
        let adult = try await RelayLiveTests.player(server.url, "Adult")
        let child = GKGameCenter(
            server: server.url, bundleID: RelayLiveTests.game, environment: .sandbox,
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)"))
        try await child.localPlayer.authenticate(
            .signUp(
                account: "child-\(UUID().uuidString.prefix(8).lowercased())", password: "password-child",
                alias: "Child", underage: true))
        let request = GKMatchRequest(minPlayers: 2, maxPlayers: 2)
        async let adultMatch = adult.matchmaker.findMatch(for: request)
        async let childMatch = child.matchmaker.findMatch(for: request)
        let matches = try await [adultMatch, childMatch]
        for match in matches { _ = try await allConnected(match) }
        do {
            try matches[1].voice.setChannel("team", .listening)
            Issue.record("an underage player joined a voice channel")
        } catch let error as GKError {
            #expect(error.code == .parentalControlsBlocked)
        }
        // The same through GKVoiceChat: the throwing form says why, the seed's optional form gives nil.
        do {
            _ = try matches[1].voiceChat(named: "team")
            Issue.record("an underage player got a voice chat")
        } catch let error as GKError {
            #expect(error.code == .parentalControlsBlocked)
        }
        #expect(matches[1].voiceChat(withName: "team") == nil)
        // The adult's channel works as usual and the child is in none.
        try matches[0].voice.setChannel("team", .listening)
        try await waitUntil("the child sees the adult listening") { matches[1].voice.members(of: "team")[adult.localPlayer.playerID] == .listening }
        #expect(matches[0].voice.members(of: "team").isEmpty)
        try await server.stop()
    }

    /// A device whose owner turned voice chat off (`restrictions.json`) is refused like an underage player, and
    /// the file is read afresh: turned on, the same match talks; turned off again, `start()` fails visibly.
    @Test func aDeviceWhoseOwnerTurnedVoiceOffIsRefusedUntilTurnedOn() async throws {
        let server = try await RelayLiveTests.server()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("owner-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let restrictions = folder.appendingPathComponent("restrictions.json")
        try Data(#"{"voiceChat": false}"#.utf8).write(to: restrictions)
        let adult = try await RelayLiveTests.player(server.url, "Adult")
        let restricted = try await RelayLiveTests.player(server.url, "Kept", restrictionsFile: restrictions)
        let request = GKMatchRequest(minPlayers: 2, maxPlayers: 2)
        async let adultMatch = adult.matchmaker.findMatch(for: request)
        async let restrictedMatch = restricted.matchmaker.findMatch(for: request)
        let matches = try await [adultMatch, restrictedMatch]
        for match in matches { _ = try await allConnected(match) }

        #expect(restricted.localPlayer.isPersonalizedCommunicationRestricted)
        #expect(!restricted.localPlayer.isUnderage, "the account is an adult's: the device alone turns voice off")
        #expect(!adult.localPlayer.isPersonalizedCommunicationRestricted)
        do {
            _ = try matches[1].voiceChat(named: "team")
            Issue.record("a device with voice chat turned off got a voice chat")
        } catch let error as GKError {
            #expect(error.code == .parentalControlsBlocked)
            #expect(error.message.contains("voiceChat"), "the error should say which setting keeps voice off: \(error.message)")
        }
        #expect(matches[1].voiceChat(withName: "team") == nil)

        try Data(#"{"voiceChat": true}"#.utf8).write(to: restrictions)
        #expect(!restricted.localPlayer.isPersonalizedCommunicationRestricted)
        matches[1].setVoiceAudio(source: try PCMPushSource(), sink: try PCMPullSink())
        let chat = try matches[1].voiceChat(named: "team")
        chat.start()
        #expect(chat.isStarted)
        try await waitUntil("the adult sees the player listening") {
            matches[0].voice.members(of: "team")[restricted.localPlayer.playerID] == .listening
        }
        chat.stop()

        // Turned off again while the game runs: start() refuses, visibly, and the relay never hears of it.
        try Data(#"{"voiceChat": false}"#.utf8).write(to: restrictions)
        let errors = Mutex<[GKError]>([])
        chat.errorHandler = { error in errors.withLock { $0.append(error) } }
        chat.start()
        #expect(!chat.isStarted)
        #expect(errors.withLock { $0.map(\.code) } == [.parentalControlsBlocked])
        try await waitUntil("the adult sees the player stopped") { matches[0].voice.members(of: "team")[restricted.localPlayer.playerID] == .joined }
        for match in matches { match.disconnect() }
        try await server.stop()
    }

    /// Once the match is over for this device, `start()` and `stop()` cannot reach the relay: the error handler says so.
    @Test func startAndStopOnADisconnectedMatchReportTheirFailure() async throws {
        let server = try await RelayLiveTests.server()
        let (_, matches) = try await RelayLiveTests.match([server.url, server.url])
        matches[0].setVoiceAudio(source: try PCMPushSource(), sink: try PCMPullSink())
        let chat = try matches[0].voiceChat(named: "team")
        let errors = Mutex<[GKError]>([])
        chat.errorHandler = { error in errors.withLock { $0.append(error) } }
        chat.start()
        #expect(chat.isStarted && errors.withLock { $0.isEmpty })
        matches[0].disconnect()
        chat.stop()
        #expect(!chat.isStarted, "stop() must stop the microphone even when the relay cannot be told")
        chat.start()
        #expect(!chat.isStarted)
        let codes = errors.withLock { $0.map(\.code) }
        #expect(codes.count == 2, "stop() and start() on a disconnected match should each report a failure: \(codes)")
        matches[1].disconnect()
        try await server.stop()
    }

    @Test func voiceGoesOverTheWebSocketWhenUDPIsBlocked() async throws {
        let udpPort = try FreePort.udp()
        let udpProxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: udpPort, seed: 5)
        udpProxy.setBlocked(true)
        let server = try await RelayLiveTests.server(arguments: ["--udp-public", "127.0.0.1:\(udpProxy.port)"], udpPort: udpPort)
        let (devices, matches) = try await RelayLiveTests.match([server.url, server.url])
        let inbox = VoiceInbox(matches[1])
        try matches[0].voice.setChannel("team", .joined)
        try matches[1].voice.setChannel("team", .listening)
        // The probes give up after 2 s; then voice, like unreliable data, takes the WebSocket.
        try await waitUntil("both devices gave up on UDP") { matches.allSatisfy { $0.unreliablePath == .webSocket } }
        try await Self.talk(matches[0], on: "team", tag: "ws", count: 20)
        try await waitUntil("voice arrived over the WebSocket") { inbox.payloads(on: "team", from: RelayLiveTests.id(devices[0])).count == 20 }
        #expect(inbox.payloads(on: "team", from: RelayLiveTests.id(devices[0])) == (0..<20).map { "ws:\($0)" })
        await udpProxy.stop()
        try await server.stop()
    }
}
