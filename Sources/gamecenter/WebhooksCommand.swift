import ArgumentParser
import Foundation
import GameCenterProtocol
import GameCenterServer

/// `gamecenter webhooks`: a game's webhook endpoints and their deliveries, through a running server's admin routes.
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks", abstract: "Add, list and remove webhook endpoints; list deliveries and replay dead ones.",
        subcommands: [Add.self, List.self, Remove.self, Deliveries.self, Replay.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an endpoint; prints its id and signing secret (shown only now).")
        @OptionGroup var connection: KeysCommand.Connection
        @Option(help: "The game's bundle id.") var game: String
        @Option(help: "The environment whose events are posted.") var environment: GameCenterProtocol.Environment = .sandbox
        @Option(help: "Where events are posted (http:// or https://).") var url: String
        @Option(name: .customLong("event"), help: "An event type (repeat for several).") var events: [WebhookEventType]

        func run() async throws {
            let created = try await connection.call(
                .POST, "webhooks", body: WebhookEndpointCreateRequest(bundleID: game, environment: environment, url: url, events: events),
                as: CreatedWebhookEndpoint.self)
            print(WebhooksCommand.line(created.endpoint))
            print("endpoint id: \(created.endpoint.endpointID)")
            print("secret:      \(created.secret)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the endpoints (of one game with --game).")
        @OptionGroup var connection: KeysCommand.Connection
        @Option(help: "Only this game's endpoints.") var game: String?

        func run() async throws {
            let path = game.map { "webhooks?bundleID=\($0.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? $0)" } ?? "webhooks"
            let list = try await connection.call(.GET, path, body: nil as String?, as: WebhookEndpointList.self)
            for endpoint in list.endpoints { print(WebhooksCommand.line(endpoint)) }
            if list.endpoints.isEmpty { print("no webhook endpoints") }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an endpoint and its deliveries.")
        @OptionGroup var connection: KeysCommand.Connection
        @Argument(help: "The endpoint id.") var endpointID: String

        func run() async throws {
            try await connection.send(.DELETE, "webhooks/\(endpointID)")
            print("removed \(endpointID)")
        }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an endpoint's deliveries, newest first (--state dead: the dead letters).")
        @OptionGroup var connection: KeysCommand.Connection
        @Argument(help: "The endpoint id.") var endpointID: String
        @Option(help: "pending, delivered or dead.") var state: String?
        @Option(help: "At most this many (1 to 1000).") var limit = 20

        func run() async throws {
            let query = "limit=\(limit)" + (state.map { "&state=\($0)" } ?? "")
            let list = try await connection.call(.GET, "webhooks/\(endpointID)/deliveries?\(query)", body: nil as String?, as: WebhookDeliveryList.self)
            for delivery in list.deliveries {
                print(
                    "\(delivery.deliveryID)  \(delivery.eventID)  \(delivery.eventType)  \(delivery.state)  attempts \(delivery.attempts)"
                        + (delivery.lastError.map { "  last error: \($0)" } ?? ""))
            }
            if list.deliveries.isEmpty { print("no deliveries") }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Put a dead delivery back in line.")
        @OptionGroup var connection: KeysCommand.Connection
        @Argument(help: "The endpoint id.") var endpointID: String
        @Argument(help: "The delivery id.") var deliveryID: Int64

        func run() async throws {
            try await connection.send(.POST, "webhooks/\(endpointID)/deliveries/\(deliveryID)/replay", body: [String: String]())
            print("delivery \(deliveryID) queued again")
        }
    }

    static func line(_ endpoint: WebhookEndpointInfo) -> String {
        "\(endpoint.endpointID)  \(endpoint.bundleID) \(endpoint.environment.rawValue)  \(endpoint.events.map(\.rawValue).joined(separator: ","))  \(endpoint.url)"
    }
}
