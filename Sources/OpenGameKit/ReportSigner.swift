import Crypto
import Foundation
import GameCenterProtocol

/// Signs score reports for leaderboards whose write policy is `signed`: the first report such a board refuses for want
/// of a signature makes the device ask the server for its session's report key (`POST /v1/report-keys`); from then on
/// every score report carries a counter, one above the last, and the HMAC-SHA256 of `COUNTER.BODY` with that key. A
/// report refused because its counter was taken (two sent at once arrived out of order) is signed again with the next
/// one; its report id keeps it applied once.
actor ReportSigner {
    private struct Key {
        /// The session it belongs to.
        var token: String
        var key: SymmetricKey
        var counter: Int64
    }
    private var key: Key?

    /// Sends a score report (`json`, to `path`) for the session with `token`, signed when a key is known, and again
    /// with a key or a new counter when the server asks for one.
    func send<Response: Decodable & Sendable>(_ path: String, json: Data, token: String, api: APIClient, as: Response.Type) async throws -> Response {
        var attempts = 0
        while true {
            attempts += 1
            do {
                return try await api.send(.POST, path, json: json, token: token, headers: headers(json, token: token), as: Response.self)
            } catch let error as GKError where attempts < 4 {
                switch error.serverCode {
                case WireErrorCode.leaderboardSignatureRequired.rawValue, WireErrorCode.leaderboardSignatureInvalid.rawValue:
                    // No key yet, or the session's key was replaced: ask for one (once).
                    guard attempts == 1 || key?.token != token else { throw error }
                    let issued = try await api.send(.POST, "/v1/report-keys", json: Data("{}".utf8), token: token, as: ReportKey.self)
                    guard let bytes = Data(base64Encoded: issued.key) else { throw GKError(.unknown, "the server's report key is not base64") }
                    key = Key(token: token, key: SymmetricKey(data: bytes), counter: issued.counter)
                case WireErrorCode.leaderboardCounterUsed.rawValue:
                    continue
                default:
                    throw error
                }
            }
        }
    }

    /// The signature headers of the next counter, when this session has a key.
    private func headers(_ json: Data, token: String) -> [(String, String)] {
        guard var current = key, current.token == token else { return [] }
        current.counter += 1
        key = current
        return ReportSignature.headers(key: current.key, counter: current.counter, body: json)
    }
}
