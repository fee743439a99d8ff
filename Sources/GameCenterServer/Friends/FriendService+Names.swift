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
