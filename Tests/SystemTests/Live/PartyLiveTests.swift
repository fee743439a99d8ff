import Foundation
import NetworkFaultProxy
import OpenGameKit
import Testing

/// Activities with party codes through the SDK against a real server process, on every engine (`tapper.party` in
/// `games/tapper.yaml`: 2 to 4 players, a fill time of 2 s): seven devices share one code, the host's friends land in
/// the host's match when too many play, and a player joins from the Game Center app in a browser.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PartyLiveTests {
    /// Starts `tapper.party` on `device`, in the party with `code` (a new one when nil).
    static func start(_ device: GKGameCenter, code: String? = nil) async throws -> GKGameActivity {
        let definitions = try await GKGameActivityDefinition.loadGameActivityDefinitions(IDs: ["tapper.party"], in: device)
        return try await GKGameActivity.start(definition: try #require(definitions.first), partyCode: code, in: device)
    }

    @Test(arguments: LiveServer.engines)
    func aPartyOfSixPlaysTwoMatchesWithTheHostsFriendsTogether(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        var devices: [String: GKGameCenter] = [:]
        for alias in ["Ann", "Bob", "Cleo", "Dan", "Eve", "Fay"] { devices[alias] = try await Devices.signedUp(server, alias: alias).0 }
        let (ann, bob, cleo) = (devices["Ann"]!, devices["Bob"]!, devices["Cleo"]!)
        try await MatchmakingLiveTests.befriend(ann, bob)
        try await MatchmakingLiveTests.befriend(ann, cleo)
        let annEvents = ann.events

        // Ann hosts; the code is Apple's format. Everyone else types it (in lower case) and joins her party.
        let hosted = try await Self.start(ann)
        let code = try #require(hosted.partyCode)
        #expect(GKGameActivity.isValidPartyCode(code) && hosted.partyHostID == ann.localPlayer.playerID && hosted.state == .active)
        #expect(hosted.properties == ["mode": "classic"] && hosted.makeMatchRequest()?.maxPlayers == 4)
        #expect(hosted.partyURL?.absoluteString == server.url.absoluteString + "/party?code=\(code)")
        var activities: [String: GKGameActivity] = ["Ann": hosted]
        for alias in ["Dan", "Eve", "Fay", "Bob", "Cleo"] { activities[alias] = try await Self.start(devices[alias]!, code: code.lowercased()) }
        #expect(activities["Cleo"]!.partyPlayerIDs.count == 6 && activities["Cleo"]!.partyHostID == ann.localPlayer.playerID)
        // Each join is told with the activity as it then was (the device delivers these events in no fixed order).
        let dan = devices["Dan"]!.localPlayer.playerID
        let joined = try await nextEvent(annEvents) { event -> GKGameActivity? in
            if case .partyPlayerJoined(let player, let activity) = event, player == dan { activity } else { nil }
        }
        #expect(joined.partyPlayerIDs.contains(dan) && joined.partyHostID == ann.localPlayer.playerID)

        // Six players, four seats: the guests ask first, then Ann's friends, then Ann. Ann's match takes both friends
        // and the first guest; the two other guests play together.
        var finding: [String: Task<GKMatch, any Error>] = [:]
        for (index, alias) in ["Dan", "Eve", "Fay", "Bob", "Cleo", "Ann"].enumerated() {
            let activity = activities[alias]!
            finding[alias] = Task { try await activity.findMatch() }
            try await waitUntil("\(alias) waits") { try await ann.matchmaker.queryActivity() == index + 1 }
        }
        var matches: [String: GKMatch] = [:]
        for (alias, task) in finding { matches[alias] = try await value(of: task, "\(alias)'s party match") }
        let hostMatch = matches["Ann"]!.matchID
        #expect(["Bob", "Cleo", "Dan"].allSatisfy { matches[$0]!.matchID == hostMatch }, "\(matches.mapValues(\.matchID))")
        #expect(matches["Eve"]!.matchID == matches["Fay"]!.matchID && matches["Eve"]!.matchID != hostMatch)
        for match in matches.values { match.disconnect() }

        // Ann ends her activity: the score set on it is reported, and the code takes nobody new.
        hosted.setScore(on: "tapper.taps", to: 77)
        try await hosted.end()
        #expect(hosted.state == .ended && hosted.partyCode == nil)
        let (scores, _) = try await LeaderboardsLiveTests.load(ann, "tapper.taps")
        #expect(scores.first { $0.playerID == ann.localPlayer.playerID }?.value == 77)
        let (gus, _) = try await Devices.signedUp(server, alias: "Gus")
        let late = try await Self.start(gus, code: code)
        #expect(late.partyHostID == gus.localPlayer.playerID && late.partyPlayerIDs == [gus.localPlayer.playerID])
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aCodeTypedInTheGameCenterAppStartsTheActivityOnThePlayersDevice(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (ann, _) = try await Devices.signedUp(server, alias: "Ann")
        let (bob, bobAccount) = try await Devices.signedUp(server, alias: "Bob")
        let bobEvents = bob.events
        let hosted = try await Self.start(ann)
        let code = try #require(hosted.partyCode)

        // Bob types Ann's code on the party page of the Game Center app.
        var browser = try await WebAppBrowser.signedIn(to: server.url, account: bobAccount, password: "password-Bob")
        let form = try await browser.get("/party?code=\(code)")
        #expect(form.status == 200 && form.html.contains("Tap party") && form.html.contains("Started by <strong>Ann</strong>"))
        let joined = try await browser.submit("/party/join", on: "/party", [("code", code.lowercased())])
        #expect(joined.status == 303, "\(joined.html)")
        #expect(try await browser.get(try #require(joined.location)).html.contains("You joined the party. Open Tapper on your device"))

        // His running game hears it and keeps it until started.
        let chosen = try await nextEvent(bobEvents) { event -> GKGameActivity? in
            if case .wantsToPlay(let activity) = event { activity } else { nil }
        }
        #expect(chosen.state == .initialized && chosen.partyCode == code && chosen.activityDefinition.identifier == "tapper.party")
        #expect(try await GKGameActivity.pendingGameActivities(in: bob).map(\.identifier) == [chosen.identifier])
        try await chosen.start()
        #expect(chosen.state == .active && chosen.startDate != nil)
        #expect(try await GKGameActivity.pendingGameActivities(in: bob).isEmpty)
        try await hosted.reload()
        #expect(hosted.partyPlayerIDs == [ann.localPlayer.playerID, bob.localPlayer.playerID])

        // A code nobody has is an error on the page.
        let missing = try await browser.submit("/party/join", on: "/party", [("code", "ZZZZ-ZZZZ")])
        #expect(missing.status == 404 && missing.html.contains("no party of this game has this code"))
        try await server.stop()
    }
}
