import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import NIOCore

/// Accounts for a benchmark: one caller with half of the others as friends (friends see status and recent games).
struct BenchPlayers {
    var headers: [(String, String)]
    var lookupIDs: [String]

    static func create(client: HTTPClient, port: Int, count: Int) async throws -> BenchPlayers {
        let base = "http://127.0.0.1:\(port)"
        let device = [(DeviceHeader.bundleID, "com.example.bench"), (DeviceHeader.environment, "sandbox")]
        let run = UUID().uuidString.prefix(8).lowercased()
        var sessions: [SessionResponse] = []
        for index in 0..<count {
            let signUp = SignUpRequest(account: "bench\(run)-\(index)", password: "bench-password", alias: "Bench \(index)")
            sessions.append(try await send(client, "POST", "\(base)/v1/accounts", device, signUp, as: SessionResponse.self))
        }
        let caller = sessions[0]
        let callerHeaders = device + [("Authorization", "Bearer \(caller.token)")]
        let friends = sessions[1...].prefix((count - 1) / 2)
        try await sendNoContent(
            client, "POST", "\(base)/v1/friend-requests", callerHeaders,
            SendFriendRequests(playerIDs: friends.map(\.player.playerID), message: nil))
        for friend in friends {
            let friendHeaders = device + [("Authorization", "Bearer \(friend.token)")]
            let pending = try await send(client, "GET", "\(base)/v1/friend-requests", friendHeaders, Optional<String>.none, as: FriendRequestList.self)
            for request in pending.requests {
                try await sendNoContent(client, "POST", "\(base)/v1/friend-requests/\(request.requestID)/accept", friendHeaders, Optional<String>.none)
            }
        }
        return BenchPlayers(headers: callerHeaders, lookupIDs: sessions[1...].map(\.player.playerID))
    }

    /// Signs up `count` players and returns their tokens.
    static func signUpMany(client: HTTPClient, port: Int, count: Int, bundleID: String = "com.example.bench") async throws -> [String] {
        let device = [(DeviceHeader.bundleID, bundleID), (DeviceHeader.environment, "sandbox")]
        let run = UUID().uuidString.prefix(8).lowercased()
        var tokens: [String] = []
        for index in 0..<count {
            let signUp = SignUpRequest(account: "bench\(run)-\(index)", password: "bench-password", alias: "Bench \(index)")
            tokens.append(try await send(client, "POST", "http://127.0.0.1:\(port)/v1/accounts", device, signUp, as: SessionResponse.self).token)
        }
        return tokens
    }

    private static func request(_ method: String, _ url: String, _ headers: [(String, String)], _ body: (some Encodable)?) throws -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        request.headers.add(contentsOf: headers)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try WireCoding.makeEncoder().encode(body)))
        }
        return request
    }

    /// Sends `body` as JSON and decodes the answer (a non-2xx answer throws).
    static func send<T: Decodable>(
        _ client: HTTPClient, _ method: String, _ url: String, _ headers: [(String, String)], _ body: (some Encodable)?, as: T.Type
    ) async throws -> T {
        let response = try await client.execute(try request(method, url, headers, body), timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else { throw BenchError("\(method) \(url): HTTP \(response.status.code)") }
        return try WireCoding.makeDecoder().decode(T.self, from: Data(bytes.readableBytesView))
    }

    private static func sendNoContent(
        _ client: HTTPClient, _ method: String, _ url: String, _ headers: [(String, String)], _ body: (some Encodable)?
    ) async throws {
        let response = try await client.execute(try request(method, url, headers, body), timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else { throw BenchError("\(method) \(url): HTTP \(response.status.code)") }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
