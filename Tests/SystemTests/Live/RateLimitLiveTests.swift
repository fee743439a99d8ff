import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkFaultProxy
@testable import OpenGameKit
import Testing

/// The abuse limits a real server enforces on SDK devices and raw clients: invitations to one friend, and
/// realtime channels per session (today one token could open 200).
@Suite(.serialized, .timeLimit(.minutes(3))) struct RateLimitLiveTests {
    /// Inviting and cancelling again and again (30 rounds pushed 60 frames to the friend) stops at the pair's limit:
    /// the game hears `request.rate_limited` from `findMatch`, the friend hears nothing more.
    @Test func invitingTheSameFriendAgainAndAgainStopsAtTheLimit() async throws {
        let server = try LiveServer(engine: "sqlite", games: try MatchmakingLiveTests.games())
        try await server.start(extraArguments: ["--admin-key", MatchmakingLiveTests.adminKey, "--rate-limit", "invitations-to-one-player=2/3600"])
        let alice = try await MatchmakingLiveTests.player(server, "Alice"), bob = try await MatchmakingLiveTests.player(server, "Bob")
        try await MatchmakingLiveTests.befriend(alice, bob)
        let bobInvites = InviteInbox()
        bobInvites.watch(bob)
        for _ in 0..<2 {
            let task = MatchmakingLiveTests.find(alice, MatchmakingLiveTests.request(2, 2, invite: [bob.localPlayer.playerID]))
            _ = try await bobInvites.next()
            alice.matchmaker.cancel()
            await #expect(throws: GKError.self) { try await value(of: task, "Alice's cancelled request") }
        }
        let refused = await #expect(throws: GKError.self) {
            try await alice.matchmaker.findMatch(for: MatchmakingLiveTests.request(2, 2, invite: [bob.localPlayer.playerID]))
        }
        #expect(refused?.serverCode == "request.rate_limited")
        #expect((refused?.retryAfterSeconds ?? 0) > 0)
        #expect(refused?.message.contains("invitations to this player") == true, "\(refused?.message ?? "")")
        let scrape = try await Self.metrics(server)
        #expect(scrape.contains(#"ratelimit_refused{limit="invitations-to-one-player"} 1"#), "\(scrape)")
        try await server.stop()
    }

    /// A session may hold `--realtime-channels-per-session` channels; one more is answered 429 before the upgrade,
    /// and a closed channel frees its place. Any refused upgrade gets its real answer.
    @Test func aSessionHoldsAtMostItsRealtimeChannels() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start(extraArguments: ["--realtime-channels-per-session", "2"])
        let (_, account) = try await Devices.signedUp(server, alias: "Chan")
        let token = try await Self.signIn(server, account: account, alias: "Chan")
        let first = try RawTCPConnection.openRealtime(port: server.port, token: token),
            second = try RawTCPConnection.openRealtime(port: server.port, token: token)
        #expect(first.status == 101 && second.status == 101)
        // The server counts a channel as open after its upgrade, before it says hello: a third upgrade made before
        // then would pass the cap's check.
        #expect(Self.saidHello(first) && Self.saidHello(second), "a channel never said hello")
        let third = try RawTCPConnection.openRealtime(port: server.port, token: token)
        #expect(third.status == 429 && third.response.contains("request.rate_limited"), "\(third.response)")
        #expect(third.response.lowercased().contains("retry-after: "))
        // Every refused upgrade says why (Hummingbird alone answers a bare 400).
        let forged = try RawTCPConnection.openRealtime(port: server.port, token: "gct_forged")
        #expect(forged.status == 401 && forged.response.contains("account.not_authenticated"), "\(forged.response)")
        // Another session of the same player is not limited by this one.
        #expect(try RawTCPConnection.openRealtime(port: server.port, token: try await Self.signIn(server, account: account, alias: "Chan")).status == 101)
        first.connection.close()
        try await waitUntil("the closed channel's place is free") { try RawTCPConnection.openRealtime(port: server.port, token: token).status == 101 }
        withExtendedLifetime(second.connection) {}
        try await server.stop()
    }

    /// Whether the realtime channel `openRealtime` opened sent its hello frame (waiting at most 10 s for it).
    static func saidHello(_ channel: (status: Int, response: String, connection: RawTCPConnection)) -> Bool {
        channel.response.contains("hello") || channel.connection.readUntilClosed(within: .seconds(10), orUntil: "hello").text.contains("hello")
    }

    @Test func openingChannelsFasterThanTheLimitIsRefused() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start(extraArguments: ["--rate-limit", "realtime-channels=3/3600"])
        let (_, account) = try await Devices.signedUp(server, alias: "Fast")
        let token = try await Self.signIn(server, account: account, alias: "Fast")
        for _ in 0..<3 {
            let opened = try RawTCPConnection.openRealtime(port: server.port, token: token)
            #expect(opened.status == 101)
            opened.connection.close()
        }
        let refused = try RawTCPConnection.openRealtime(port: server.port, token: token)
        #expect(refused.status == 429 && refused.response.contains("realtime channels opened by this session"), "\(refused.response)")
        try await server.stop()
    }

    /// A fresh session token for an account `Devices.signedUp` made (its password is `password-ALIAS`).
    static func signIn(_ server: LiveServer, account: String, alias: String) async throws -> String {
        var request = URLRequest(url: server.url.appendingPathComponent("v1/sessions"))
        request.httpMethod = "POST"
        request.setValue("com.example.tapper", forHTTPHeaderField: "X-GameCenter-Bundle-ID")
        request.setValue("sandbox", forHTTPHeaderField: "X-GameCenter-Environment")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"account": "\#(account)", "password": "password-\#(alias)"}"#.utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        return try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["token"] as? String)
    }

    static func metrics(_ server: LiveServer) async throws -> String {
        var request = URLRequest(url: server.url.appendingPathComponent("metrics"))
        request.setValue("Bearer \(MatchmakingLiveTests.adminKey)", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        return String(decoding: data, as: UTF8.self)
    }
}
