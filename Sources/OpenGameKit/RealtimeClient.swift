import Foundation
import GameCenterProtocol
import HTTPTypes
import Logging
import NIOCore
import Synchronization
import WSClient

/// Keeps a device's realtime channel open while its session lasts: connects with the device's event cursor,
/// hands events to the game, answers heartbeats, and reconnects with back-off when the channel drops.
struct RealtimeClient: Sendable {
    let device: GKGameCenter
    let token: String

    /// Starts the channel; cancel the task to stop it.
    func start() -> Task<Void, Never> {
        Task {
            var delay = 0.1
            while !Task.isCancelled {
                let outcome = await connectOnce()
                device.matchmaker.channelClosed()
                switch outcome {
                case .sessionEnded(let reason):
                    await device.localPlayer.sessionEnded(token: token, error: GKError(.notAuthenticated, "the session ended: \(reason)"))
                    return
                case .wasConnected:
                    delay = 0.1
                case .failed(let server):
                    // A node that is gone: the next server (when the device has several) is tried at once.
                    if device.api.servers.urls.count > 1 {
                        device.api.servers.unreachable(server)
                        delay = 0.05
                    } else {
                        delay = min(delay * 2, 5)
                    }
                case .refused:
                    // The upgrade answer does not say why; a plain request does (a revoked or expired session).
                    do {
                        _ = try await device.api.send(.GET, "/v1/me", token: token, as: LocalPlayerProfile.self)
                    } catch let error as GKError where error.code == .notAuthenticated {
                        await device.localPlayer.sessionEnded(token: token, error: error)
                        return
                    } catch {}
                    delay = min(delay * 2, 5)
                }
                try? await Task.sleep(for: .milliseconds(Int(delay * 1000 * Double.random(in: 0.8...1.2))))
            }
        }
    }

    private enum Outcome {
        case sessionEnded(String)
        case wasConnected
        /// No channel could be opened with `server`.
        case failed(server: URL)
        /// The server answered the upgrade request with an error.
        case refused
    }

    private func connectOnce() async -> Outcome {
        let cursor = device.state.withLock { $0.session?.eventCursor } ?? 0
        let server = device.api.server
        let url = APIClient.webSocketURL(on: server, "/v1/realtime?after=\(cursor)")
        let headers = device.api.webSocketHeaders(token: token)
        let outcome = OutcomeBox()
        do {
            try await WebSocketClient.connect(
                url: url, configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: headers), logger: device.logger
            ) { inbound, outbound, _ in
                try await handle(inbound: inbound, outbound: outbound, outcome: outcome)
            }
        } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
            return .refused
        } catch {
            device.logger.debug("realtime channel failed", metadata: [LogKey.error: "\(error)"])
        }
        if let reason = outcome.sessionEndedReason { return .sessionEnded(reason) }
        return outcome.connected ? .wasConnected : .failed(server: server)
    }

    private func handle(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, outcome: OutcomeBox) async throws {
        let decoder = WireCoding.makeDecoder()
        let lastHeard = LastHeard()
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Closes a channel whose server fell silent (no frames for three heartbeats), so that we reconnect.
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(1))
                    if lastHeard.silentFor > lastHeard.heartbeatSeconds * 3 {
                        try await outbound.close(.goingAway, reason: "server silent")
                        return
                    }
                }
            }
            defer { group.cancelAll() }
            for try await message in inbound.messages(maxSize: 1 << 20) {
                lastHeard.touch()
                guard case .text(let text) = message, let frame = try? decoder.decode(ServerFrame.self, from: Data(text.utf8)) else {
                    continue
                }
                switch frame {
                case .hello(let seconds, _):
                    lastHeard.heartbeatSeconds = max(seconds, 0.05)
                    outcome.connected = true
                    device.eventHub.publish(.connected)
                    device.matchmaker.channelOpened()
                    await device.retryOutbox()
                case .event(let event):
                    deliver(event)
                case .heartbeat:
                    let reply = String(decoding: try WireCoding.makeEncoder().encode(ClientFrame.heartbeat), as: UTF8.self)
                    try await outbound.write(.text(reply))
                case .sessionEnded(let reason):
                    outcome.sessionEndedReason = reason
                    return
                }
            }
        }
    }

    private func deliver(_ event: RealtimeEvent) {
        let decoder = WireCoding.makeDecoder()
        let payload = Data(event.payload.utf8)
        switch event.kind {
        case .friendRequestReceived:
            if let info = try? decoder.decode(FriendRequestInfo.self, from: payload) {
                device.eventHub.publish(.friendRequestReceived(GKFriendRequest(info: info, device: device)))
            }
        case .friendRequestAccepted:
            if let accepted = try? decoder.decode(FriendRequestAccepted.self, from: payload) {
                device.localPlayer.updateFriends { if !$0.contains(accepted.playerID) { $0.append(accepted.playerID) } }
                device.eventHub.publish(.friendRequestAccepted(playerID: accepted.playerID))
            }
        case .achievementCompleted:
            if let completed = try? decoder.decode(AchievementCompleted.self, from: payload), completed.bundleID == device.bundleID {
                device.eventHub.publish(.achievementCompleted(identifier: completed.identifier))
            }
        case .friendRemoved:
            if let removed = try? decoder.decode(FriendRemoved.self, from: payload) {
                device.localPlayer.updateFriends { $0.removeAll { $0 == removed.playerID } }
                device.eventHub.publish(.friendRemoved(playerID: removed.playerID))
            }
        case .matchInvitation, .invitationAccepted, .invitationCancelled, .inviteeAnswered, .matchFound, .matchRequestFailed,
            .matchPlayerLeft, .playWithFriends:
            device.matchmaker.handle(event.kind, payload: payload, bundleID: device.bundleID)
        case .turnBased:
            if let info = try? decoder.decode(TurnBasedEventInfo.self, from: payload), info.match.bundleID == device.bundleID {
                device.turnBasedListeners.deliver(info, playerID: device.localPlayer.playerID, device: device)
            }
        case .savedGame:
            if let info = try? decoder.decode(SavedGameEventInfo.self, from: payload), info.bundleID == device.bundleID {
                device.savedGameListeners.deliver(info, playerID: device.localPlayer.playerID, device: device)
            }
        case .challenge:
            if let info = try? decoder.decode(ChallengeEventInfo.self, from: payload), info.bundleID == device.bundleID {
                device.eventHub.publish(.challenge(GKChallengeEvent(info, in: device)))
            }
        case .activity:
            if let info = try? decoder.decode(ActivityEventInfo.self, from: payload), info.bundleID == device.bundleID {
                device.deliverActivity(info)
            }
        case .screenPresentation:
            if let presentation = try? decoder.decode(ScreenPresentation.self, from: payload) {
                device.presentedScreens.handle(presentation)
            }
        }
        device.localPlayer.advanceCursor(to: event.seq, token: token)
    }
}

/// What one connection attempt ended with, written from inside the WebSocket handler.
private final class OutcomeBox: Sendable {
    private struct State {
        var connected = false
        var reason: String?
    }

    private let state = Mutex(State())

    var connected: Bool {
        get { state.withLock { $0.connected } }
        set { state.withLock { $0.connected = newValue } }
    }

    var sessionEndedReason: String? {
        get { state.withLock { $0.reason } }
        set { state.withLock { $0.reason = newValue } }
    }
}

/// When the server was last heard from.
private final class LastHeard: Sendable {
    private struct State {
        var last = ContinuousClock.now
        var heartbeat = 15.0
    }

    private let state = Mutex(State())

    func touch() { state.withLock { $0.last = .now } }

    var silentFor: Double {
        let elapsed = ContinuousClock.now - state.withLock { $0.last }
        let (seconds, attoseconds) = elapsed.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    var heartbeatSeconds: Double {
        get { state.withLock { $0.heartbeat } }
        set { state.withLock { $0.heartbeat = newValue } }
    }
}
