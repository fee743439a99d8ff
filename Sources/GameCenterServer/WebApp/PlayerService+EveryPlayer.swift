import GameCenterProtocol

extension PlayerService {
    /// `ids` as the caller may see them (``loadPlayers(_:caller:device:)``), however many: in as many lookups of at
    /// most ``Limits/maximumPlayerIDsPerRequest`` ids as it takes. Unknown ids are left out.
    func loadEveryPlayer(_ ids: [String], caller: AuthenticatedSession, device: DeviceIdentity) async throws -> [PlayerProfile] {
        var profiles: [PlayerProfile] = []
        for start in stride(from: 0, to: ids.count, by: Limits.maximumPlayerIDsPerRequest) {
            let chunk = Array(ids[start..<min(start + Limits.maximumPlayerIDsPerRequest, ids.count)])
            profiles += try await loadPlayers(chunk, caller: caller, device: device).players
        }
        return profiles
    }
}
