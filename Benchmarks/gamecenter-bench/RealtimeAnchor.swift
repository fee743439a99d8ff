import ArgumentParser
import Foundation
import GameCenterProtocol
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import Synchronization

/// `gamecenter-bench realtime-anchor`: the anchor of `gamecenter-bench realtime`, run as a process of its own so
/// its memory and CPU are measured as the server's are. A bare Hummingbird WebSocket server speaking the same
/// frames: a hello on upgrade, a heartbeat every interval, and `POST /v1/achievements` pushing one event to the
/// caller's channel. No accounts, storage, sequence numbers or checks: what any realtime push must cost at least.
struct RealtimeAnchor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realtime-anchor", abstract: "The bare WebSocket push server `realtime` measures against (started by it).",
        shouldDisplay: false
    )

    @Option(name: .customLong("heartbeat-seconds"), help: "Seconds between heartbeats.") var heartbeatSeconds = 5.0

    func run() async throws {
        let logger = Logger(label: "anchor") { _ in SwiftLogNoOpLogHandler() }
        let channels = Mutex<[String: WebSocketOutboundWriter]>([:])
        let heartbeat = Duration.milliseconds(Int64(heartbeatSeconds * 1000))
        let encoder = WireCoding.makeEncoder()
        let hello = String(decoding: try encoder.encode(ServerFrame.hello(heartbeatSeconds: heartbeatSeconds, cursor: 0)), as: UTF8.self)
        let ping = String(decoding: try encoder.encode(ServerFrame.heartbeat), as: UTF8.self)

        let webSockets = Router(context: BasicWebSocketRequestContext.self)
        webSockets.ws("v1/realtime") { inbound, outbound, context in
            let token = context.request.headers[.authorization] ?? ""
            channels.withLock { $0[token] = outbound }
            defer { _ = channels.withLock { $0.removeValue(forKey: token) } }
            try await outbound.write(.text(hello))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    while true {
                        try await Task.sleep(for: heartbeat)
                        try await outbound.write(.text(ping))
                    }
                }
                for try await _ in inbound.messages(maxSize: 1 << 16) {}
                group.cancelAll()
            }
        }
        let router = Router()
        router.post("v1/achievements") { request, _ -> Response in
            _ = try await request.body.collect(upTo: 1 << 16)
            let token = request.headers[.authorization] ?? ""
            guard let channel = channels.withLock({ $0[token] }) else { return Response(status: .notFound) }
            let encoder = WireCoding.makeEncoder()
            let completed = AchievementCompleted(bundleID: RealtimeBench.bundleID, identifier: "done", completedAt: Date())
            let payload = String(decoding: try encoder.encode(completed), as: UTF8.self)
            let event = ServerFrame.event(RealtimeEvent(seq: 1, kind: .achievementCompleted, payload: payload, createdAt: Date()))
            try await channel.write(.text(String(decoding: try encoder.encode(event), as: UTF8.self)))
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
        }
        let application = Application(
            router: router, server: .http1WebSocketUpgrade(webSocketRouter: webSockets),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)\n".utf8))
            }, logger: logger)
        try await application.runService()
    }
}
