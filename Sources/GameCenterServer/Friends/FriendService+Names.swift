import Foundation
import GameCenterProtocol
import GameCenterStorage

extension FriendService {
    /// The player a friend request typed by name is for: the one whose account name it is (account names are
    /// unique), else the one whose alias it is exactly. Several players sharing the alias is `aliasShared`, none
    /// `noPlayerNamed`; the name is trimmed of surrounding spaces and is 1 to 64 characters.
    func player(named raw: String, environment: GameCenterProtocol.Environment) async throws -> PlayerRecord {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...64).contains(name.count) else { throw APIError.friendNameInvalid }
        let found = try await database.read { try await $0.players(environment: environment.rawValue, accountNameOrAlias: name) }
        if let byAccount = found.first(where: { $0.accountName == name.lowercased() }) { return byAccount }
        guard let first = found.first else { throw APIError.noPlayerNamed(name) }
        guard found.count == 1 else { throw APIError.aliasShared(name) }
        return first
    }

    /// Sends one request to each player named by account name or exact alias (``player(named:environment:)``), all
    /// or none. Every name counts against the sender's `friend-requests` limit before it is looked up, found or
    /// not, so names can be tried no faster than requests can be sent: nobody can enumerate accounts.
    func send(byName request: SendFriendRequestsByName, from session: AuthenticatedSession, device: DeviceIdentity) async throws {
        let most = Limits.maximumPlayerIDsPerRequest
        guard (1...most).contains(request.names.count) else {
            throw APIError.invalidParameter("names must hold 1 to \(most) account names or aliases; it holds \(request.names.count)")
        }
        try limiter.take(.friendRequests, for: session.playerID, cost: request.names.count)
        var recipients: [String] = []
        for name in request.names {
            recipients.append(try await player(named: name, environment: device.environment).playerID)
        }
        try await send(SendFriendRequests(playerIDs: recipients, message: request.message), from: session, device: device, senderCharged: true)
    }

    /// The one player a friend request typed by name on a page is for, after charging the sender one
    /// `friend-requests` token, found or not (see ``send(byName:from:device:)``); send to them with `senderCharged`.
    func recipient(named name: String, by session: AuthenticatedSession, environment: GameCenterProtocol.Environment) async throws -> PlayerRecord {
        try limiter.take(.friendRequests, for: session.playerID)
        return try await player(named: name, environment: environment)
    }

    /// The requests the caller sent that wait for an answer, oldest first, with the recipients' aliases.
    func sent(by session: AuthenticatedSession) async throws -> [(request: FriendRequestRecord, toAlias: String)] {
        try await database.read { storage in
            let requests = try await storage.pendingFriendRequests(from: session.playerID)
            let recipients = try await storage.players(ids: Array(Set(requests.map(\.toPlayer))), environment: nil)
            let aliases = Dictionary(recipients.map { ($0.playerID, $0.alias) }) { a, _ in a }
            return requests.map { ($0, aliases[$0.toPlayer] ?? "") }
        }
    }
}
