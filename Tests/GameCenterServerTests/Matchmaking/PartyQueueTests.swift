import Testing
@testable import GameCenterServer

/// The party rules of ``MatchmakingQueue`` (its ``PartyQueue``), without a server: players who share a code land in
/// one match; when too many wait, the host's match takes the host's friends first; others wait for the host (at most
/// their `hostWait`); parties never mix with each other or with auto-match.
@Suite struct PartyQueueTests {
    /// Party tickets of 2 to 4 players, fill time 2 s, waiting up to 60 s for the host.
    struct Party {
        var queue = MatchmakingQueue()
        var nextID: UInt64 = 1
        let code: String

        init(code: String = "AB-CD") { self.code = code }

        /// `friends`: the host's friends in the party (the host's seat only).
        mutating func arrive(
            _ player: String, _ role: PartySeat.Role, at now: Int64, code: String? = nil, friends: Set<String> = [], min: Int = 2, max: Int = 4
        ) -> [[String]] {
            defer { nextID += 1 }
            let ticket = Ticket(
                id: TicketID(nextID), playerID: player, key: QueueKey(game: "game", hosted: false, playerGroup: 0), minPlayers: min, maxPlayers: max,
                fillTime: 2_000, party: PartySeat(code: code ?? self.code, role: role, hostWait: 60_000, friends: friends))
            return Self.players(queue.enqueue(ticket, now: now))
        }

        mutating func tick(_ now: Int64) -> [[String]] { Self.players(queue.tick(now: now)) }

        static func players(_ outcome: MatchmakingOutcome) -> [[String]] {
            outcome.started.map { $0.members.map(\.playerID) }
        }
    }

    @Test func everyoneWithTheCodeLandsInOneMatchWithTheHost() {
        var party = Party()
        // Guests who come first wait for the host, past the fill time.
        #expect(party.arrive("dan", .guest, at: 0).isEmpty)
        #expect(party.arrive("eve", .guest, at: 100).isEmpty)
        #expect(party.tick(10_000).isEmpty && party.queue.waitingCount == 2)
        // The host makes three: not full, so it starts after the fill time with all three.
        #expect(party.arrive("ann", .host, at: 20_000).isEmpty)
        #expect(party.queue.nextDeadline == 22_000)
        #expect(party.tick(21_999).isEmpty)
        #expect(party.tick(22_000) == [["ann", "dan", "eve"]])
        #expect(party.queue.waitingCount == 0)
    }

    @Test func theHostsFriendsAreNeverSplitWhenTooManyJoin() {
        var party = Party()
        // Three guests, then the host's two friends, then the host: four seats.
        for (index, guest) in ["dan", "eve", "fay"].enumerated() { #expect(party.arrive(guest, .guest, at: Int64(index)).isEmpty) }
        #expect(party.arrive("bob", .hostFriend, at: 10).isEmpty)
        #expect(party.arrive("cleo", .hostFriend, at: 11).isEmpty)
        #expect(party.tick(30_000).isEmpty)
        // The host's match is full at once: the host, both friends, the first guest; the two guests left, who waited
        // past the fill time, play together at once.
        #expect(party.arrive("ann", .host, at: 40_000, friends: ["bob", "cleo"]) == [["ann", "bob", "cleo", "dan"], ["eve", "fay"]])
    }

    @Test func friendsStayTogetherWhateverTheOrder() {
        // Every order of arrival of a host, two friends and three guests: the host's match holds both friends (it keeps
        // their seats until they come).
        let people: [(String, PartySeat.Role)] = [
            ("ann", .host), ("bob", .hostFriend), ("cleo", .hostFriend), ("dan", .guest), ("eve", .guest), ("fay", .guest),
        ]
        for order in permutations(Array(people.indices)) {
            var party = Party()
            var started: [[String]] = []
            for (step, index) in order.enumerated() {
                let (player, role) = people[index]
                started += party.arrive(player, role, at: Int64(step) * 100, friends: role == .host ? ["bob", "cleo"] : [])
            }
            started += party.tick(100_000)
            let hosts = started.first { $0.contains("ann") }
            #expect(hosts.map { Set(["bob", "cleo"]).isSubset(of: $0) } == true, "\(order.map { people[$0].0 }): \(started)")
            #expect(started.flatMap { $0 }.sorted() == people.map(\.0).sorted())
        }
    }

    @Test func membersStopWaitingForAHostWhoNeverComes() {
        var party = Party()
        #expect(party.arrive("dan", .guest, at: 0).isEmpty)
        #expect(party.arrive("bob", .hostFriend, at: 5_000).isEmpty)
        #expect(party.queue.nextDeadline == 60_000)
        #expect(party.tick(59_999).isEmpty)
        // Dan is done waiting, but alone; Bob too at 65 s: then they play together.
        #expect(party.tick(60_000).isEmpty)
        #expect(party.tick(65_000) == [["dan", "bob"]])
    }

    @Test func theHostsMatchHoldsSeatsForFriendsOnlyForAWhile() {
        var party = Party()
        #expect(party.arrive("ann", .host, at: 0, friends: ["bob"]).isEmpty)
        for (index, guest) in ["dan", "eve", "fay"].enumerated() { #expect(party.arrive(guest, .guest, at: 10 + Int64(index)).isEmpty) }
        // Four wait, but one seat is Bob's: nothing starts until he comes or the host's wait ends.
        #expect(party.tick(30_000).isEmpty && party.queue.nextDeadline == 60_000)
        #expect(party.tick(60_000) == [["ann", "dan", "eve", "fay"]])
    }

    @Test func cancellingLeavesTheOthersWaiting() throws {
        var party = Party()
        #expect(party.arrive("ann", .host, at: 0).isEmpty)
        #expect(party.arrive("dan", .guest, at: 10).isEmpty)
        #expect(party.queue.lobby(containing: TicketID(2))?.members.map(\.playerID) == ["ann", "dan"])
        // Dan leaves before the fill time: Ann waits alone; Eve comes, and they start after the fill time.
        #expect(Party.players(try party.queue.remove(ticket: TicketID(2), now: 1_000)).isEmpty)
        #expect(party.tick(5_000).isEmpty && party.queue.waitingCount == 1)
        #expect(party.arrive("eve", .guest, at: 6_000).isEmpty)
        #expect(party.tick(8_000) == [["ann", "eve"]])
    }

    @Test func partiesNeverMixWithEachOtherOrWithAutoMatch() {
        var party = Party()
        #expect(party.arrive("ann", .host, at: 0).isEmpty)
        #expect(party.arrive("zed", .host, at: 0, code: "ZZ-ZZ").isEmpty)
        let loner = Ticket(
            id: TicketID(100), playerID: "lou", key: QueueKey(game: "game", hosted: false, playerGroup: 0), minPlayers: 2, maxPlayers: 4, fillTime: 2_000)
        #expect(Party.players(party.queue.enqueue(loner, now: 0)).isEmpty)
        #expect(party.tick(100_000).isEmpty && party.queue.waitingCount == 3)
        #expect(party.arrive("dan", .guest, at: 100_000) == [])
        #expect(party.tick(102_000) == [["ann", "dan"]])
    }

    private func permutations(_ items: [Int]) -> [[Int]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index -> [[Int]] in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }
}
