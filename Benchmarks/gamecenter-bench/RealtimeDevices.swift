import Foundation
import GameCenterProtocol
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import Synchronization

/// The bench's devices: one realtime channel each, open until the run ends, answering every heartbeat and posting
/// each event they are told of to an ``ArrivalBoard``. The same devices measure our server and the bare anchor,
/// which speaks the same frames.
final class RealtimeDevices: Sendable {
    private struct Counts {
        var open: Set<Int> = []
        var failed = 0
        var heartbeats = 0
        var lastFailure: String?
    }

    /// Events arrive here.
    let board = ArrivalBoard()
    private let counts = Mutex(Counts())
    private let port: Int
    /// Device `i` is signed in with `tokens[i]`.
    let tokens: [String]
    private let logger: Logger

    /// Devices for the server on `port`, device `i` signed in with `tokens[i]`.
    init(port: Int, tokens: [String], logger: Logger) {
        self.port = port
        self.tokens = tokens
        self.logger = logger
    }

    /// Channels open now.
    var open: Int { counts.withLock { $0.open.count } }
    /// Channels that could not open or closed early.
    var failed: Int { counts.withLock { $0.failed } }
    /// Heartbeats answered so far.
    var heartbeats: Int { counts.withLock { $0.heartbeats } }
    /// Why the last channel failed.
    var lastFailure: String? { counts.withLock { $0.lastFailure } }

    /// Opens every device's channel, `inFlight` upgrades at a time, and keeps them open until the task is cancelled.
    /// Returns once all are open or failed; the channels run on in `group`.
    func openAll(in group: inout ThrowingDiscardingTaskGroup<any Error>, inFlight: Int) async throws {
        for device in tokens.indices {
            group.addTask { await self.run(device) }
            // Wait while more than `inFlight` upgrades are pending.
            while device + 1 - open - failed > inFlight { try await Task.sleep(for: .milliseconds(2)) }
        }
        while open + failed < tokens.count { try await Task.sleep(for: .milliseconds(10)) }
    }

    private func run(_ device: Int) async {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(tokens[device])"
        headers[HTTPField.Name(DeviceHeader.bundleID)!] = RealtimeBench.bundleID
        headers[HTTPField.Name(DeviceHeader.environment)!] = "sandbox"
        do {
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/realtime", configuration: .init(maxFrameSize: 1 << 16, additionalHeaders: headers), logger: logger
            ) { inbound, outbound, _ in
                let decoder = WireCoding.makeDecoder()
                let reply = String(decoding: try WireCoding.makeEncoder().encode(ClientFrame.heartbeat), as: UTF8.self)
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    guard case .text(let text) = message, let frame = try? decoder.decode(ServerFrame.self, from: Data(text.utf8)) else { continue }
                    switch frame {
                    case .hello:
                        _ = self.counts.withLock { $0.open.insert(device) }
                    case .heartbeat:
                        try await outbound.write(.text(reply))
                        self.counts.withLock { $0.heartbeats += 1 }
                    case .event:
                        self.board.arrived(device)
                    case .sessionEnded:
                        return
                    }
                }
            }
            if !Task.isCancelled { fail(device, "the server closed the channel") }
        } catch {
            if !Task.isCancelled { fail(device, "\(error)") }
        }
    }

    private func fail(_ device: Int, _ reason: String) {
        counts.withLock {
            $0.open.remove(device)
            $0.failed += 1
            $0.lastFailure = "device \(device): \(reason)"
        }
    }
}
