import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterServer
import NIOCore
import NIOHTTP1

/// `gamecenter keys`: the studio's game-server keys, through a running server's admin routes (so a key made or
/// revoked here is in effect on every node at once, without a restart).
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Create, list, rotate and revoke game-server keys, and make a token to try one.",
        subcommands: [Create.self, List.self, Rotate.self, Revoke.self, Token.self])

    /// Where the server is and its admin key (shared by `gamecenter webhooks`).
    struct Connection: ParsableArguments {
        @Option(help: "The server's base URL.") var server = "http://127.0.0.1:8080"
        @Option(name: .customLong("admin-key"), help: "The server's admin key (or GAMECENTER_ADMIN_KEY).") var adminKey: String?

        /// Sends an admin request and decodes its answer; a refusal exits with the server's message.
        func call<Answer: Decodable>(_ method: HTTPMethod, _ path: String, body: (some Encodable)?, as: Answer.Type) async throws -> Answer {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            return try decoder.decode(Answer.self, from: try await send(method, path, body: body))
        }

        /// Sends an admin request; its answer's body. A refusal exits with the server's message.
        @discardableResult
        func send(_ method: HTTPMethod, _ path: String, body: (some Encodable)? = nil as String?) async throws -> Data {
            guard let key = adminKey ?? ProcessInfo.processInfo.environment["GAMECENTER_ADMIN_KEY"], !key.isEmpty else {
                throw ValidationError("give the server's admin key with --admin-key or GAMECENTER_ADMIN_KEY")
            }
            var request = HTTPClientRequest(url: server.trimmingCharacters(in: ["/"]) + "/admin/v1/" + path)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
            }
            let response: HTTPClientResponse
            do {
                response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            } catch {
                throw KeysFailure("cannot reach \(server): \(error)")
            }
            let data = Data(buffer: try await response.body.collect(upTo: 4 << 20))
            guard (200..<300).contains(response.status.code) else {
                let message = (try? JSONDecoder().decode(ServerMessage.self, from: data))?.message ?? String(decoding: data.prefix(500), as: UTF8.self)
                throw KeysFailure("the server refused (\(response.status.code)): \(message)")
            }
            return data
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a key for a game; prints its key id, issuer id and private key (shown only now).")
        @OptionGroup var connection: Connection
        @Option(help: "The game's bundle id.") var game: String
        @Option(help: "The environment the key acts in.") var environment: GameCenterProtocol.Environment = .sandbox
        @Option(name: .customLong("permission"), help: "A permission (repeat for several).") var permissions: [ServerKeyPermission]
        @Option(help: "What to call the key.") var name: String?
        @Option(help: "Write the private key to this file (mode 0600) instead of printing it.") var output: String?

        func run() async throws {
            let created = try await connection.call(
                .POST, "keys", body: ServerKeyCreateRequest(bundleID: game, environment: environment, permissions: permissions, name: name),
                as: CreatedServerKey.self)
            try KeysCommand.show(created, output: output)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the keys (of one game with --game).")
        @OptionGroup var connection: Connection
        @Option(help: "Only this game's keys.") var game: String?

        func run() async throws {
            let path = game.map { "keys?bundleID=\($0.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? $0)" } ?? "keys"
            let list = try await connection.call(.GET, path, body: nil as String?, as: ServerKeyList.self)
            for key in list.keys { print(KeysCommand.line(key)) }
            if list.keys.isEmpty { print("no keys") }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a successor of a key (same game, environment and permissions); the old key works for --grace-hours more.")
        @OptionGroup var connection: Connection
        @Argument(help: "The key id.") var keyID: String
        @Option(help: "Hours the old key keeps working (0 to 720).") var graceHours: Double = 24
        @Option(help: "Write the new private key to this file (mode 0600) instead of printing it.") var output: String?

        func run() async throws {
            let created = try await connection.call(
                .POST, "keys/\(keyID)/rotate", body: ServerKeyRotateRequest(graceSeconds: Int64(graceHours * 3600)), as: CreatedServerKey.self)
            try KeysCommand.show(created, output: output)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop a key at once.")
        @OptionGroup var connection: Connection
        @Argument(help: "The key id.") var keyID: String

        func run() async throws {
            print(KeysCommand.line(try await connection.call(.DELETE, "keys/\(keyID)", body: nil as String?, as: ServerKeyInfo.self)))
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a bearer token signed with a key's private key (to try the game-server routes with curl).")
        @Option(name: .customLong("key-id"), help: "The key id.") var keyID: String
        @Option(name: .customLong("issuer"), help: "The key's issuer id.") var issuerID: String
        @Option(name: .customLong("private-key"), help: "The file holding the key's private key (PEM).") var privateKey: String
        @Option(help: "Seconds the token lives (1 to 1200).") var lifetime: Int64 = 1200

        func run() async throws {
            guard (1...1200).contains(lifetime) else { throw ValidationError("--lifetime is 1 to 1200 seconds") }
            let pem = try String(contentsOfFile: privateKey, encoding: .utf8)
            print(try ServerKeyTokens.make(keyID: keyID, issuerID: issuerID, privateKeyPEM: pem, lifetime: lifetime))
        }
    }

    static func show(_ created: CreatedServerKey, output: String?) throws {
        print(line(created.key))
        print("key id:    \(created.key.keyID)")
        print("issuer id: \(created.key.issuerID)")
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: Data(created.privateKey.utf8), attributes: [.posixPermissions: 0o600])
            else { throw KeysFailure("cannot write \(output); the key \(created.key.keyID) was made: revoke it and try again") }
            print("private key written to \(output); the server does not keep it")
        } else {
            print(created.privateKey)
        }
    }

    static func line(_ key: ServerKeyInfo) -> String {
        let state =
            key.revokedAt != nil ? "revoked" : !key.isActive ? "expired" : key.expiresAt.map { "rotated, works until \($0.formatted(.iso8601))" } ?? "active"
        return "\(key.keyID)  \(key.bundleID) \(key.environment.rawValue)  \(key.permissions.map(\.rawValue).joined(separator: ","))  \"\(key.name)\"  \(state)"
    }

    private struct ServerMessage: Decodable {
        var message: String
    }
}

/// A refusal or failure of the server, said in one line.
struct KeysFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// The command line takes these by their wire names, and lists them when a value is wrong.
extension ServerKeyPermission: ExpressibleByArgument {}
extension WebhookEventType: ExpressibleByArgument {}
extension GameCenterProtocol.Environment: ExpressibleByArgument {}
