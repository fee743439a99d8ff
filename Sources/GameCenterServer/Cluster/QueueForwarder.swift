import AsyncHTTPClient
import Crypto
import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Several nodes: hands a device's matchmaking request to the node that owns its game's queue and answers with
/// that node's answer. It also tells owners what they must know of the device's realtime channel here (open, with
/// each forwarded request; closed, when its last channel here closes), and fails the requests that waited at an
/// owner that died (their devices would otherwise wait for a match that can no longer come).
final class QueueForwarder: Sendable {
    /// The nodes' shared key (``StorageSession/clusterKey(candidate:)``): a request carrying it comes from a node.
    static let keyHeader = HTTPField.Name("X-GameCenter-Cluster-Key")!
    /// The id of the node that forwarded the request.
    static let nodeHeader = HTTPField.Name("X-GameCenter-Forwarded-By")!
    /// `1` when the device's realtime channel is open on the forwarding node.
    static let channelHeader = HTTPField.Name("X-GameCenter-Channel-Open")!
    /// The owner's answer to a forwarded request: the id of the request the session waits with in the owner's queue
    /// after the call (a request or an accepted invitation), empty for none; absent when the call failed. The
    /// forwarding node learns it from the owner's state, not from the route or body it forwarded.
    static let waitingHeader = HTTPField.Name("X-GameCenter-Waiting-Request")!
    /// How long an owner has to answer a forwarded request.
    static let timeout = TimeAmount.seconds(10)

    /// A request this node forwarded that may still wait in its owner's queue.
    struct WaitingElsewhere: Sendable, Equatable {
        var playerID: String
        var requestID: String
        var bundleID: String
        var ownerID: String
    }

    /// What was forwarded for one device session: the owners to tell when its channel closes, and its request that
    /// may still wait (a player waits with one request at a time).
    private struct ForwardedSession {
        var owners: [String: String] = [:]
        var waiting: WaitingElsewhere?
    }

    let nodeID: String
    private let key: String
    private let database: Database
    private let bus: any EventBus
    private let clock: ServerClock
    private let metrics: ServerMetrics
    private let logger: Logger
    private let sessions = Mutex<[String: ForwardedSession]>([:])

    init(nodeID: String, key: String, database: Database, bus: any EventBus, clock: ServerClock, metrics: ServerMetrics, logger: Logger) {
        self.nodeID = nodeID
        self.metrics = metrics
        self.key = key
        self.database = database
        self.bus = bus
        self.clock = clock
        self.logger = logger
    }

    /// Whether `request` comes from another node of this database (it carries the cluster key); the forwarding
    /// node's id when it does.
    func forwardingNode(of request: Request) -> String? {
        guard let shown = request.headers[Self.keyHeader],
            Data(SHA256.hash(data: Data(shown.utf8))) == Data(SHA256.hash(data: Data(key.utf8)))
        else { return nil }
        return request.headers[Self.nodeHeader] ?? ""
    }

    /// Sends `request` (a device's, authenticated here) to the owner of its game's queue and returns the owner's
    /// answer. Throws ``APIError/queueNodeUnavailable`` when the owner cannot be reached.
    func forward(
        _ request: Request, context: AppRequestContext, to owner: (id: String, url: String), channelOpen: Bool
    ) async throws -> Response {
        let session = try context.requireSession()
        guard !owner.url.isEmpty else {
            logger.error(
                "the node holding a game's matchmaking queue has no --public-url: the other nodes cannot reach it", metadata: [LogKey.node: "\(owner.id)"])
            throw APIError.queueNodeUnreachable(owner.id)
        }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        var outbound = HTTPClientRequest(url: Self.url(owner.url, request.head.path ?? request.uri.path))
        outbound.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers where !Self.notForwarded.contains(field.name.canonicalName) {
            outbound.headers.add(name: field.name.rawName, value: field.value)
        }
        outbound.headers.add(name: Self.keyHeader.rawName, value: key)
        outbound.headers.add(name: Self.nodeHeader.rawName, value: nodeID)
        outbound.headers.add(name: Self.channelHeader.rawName, value: channelOpen ? "1" : "0")
        outbound.body = .bytes(body)
        let status: HTTPResponse.Status
        var headers = HTTPFields()
        let answer: ByteBuffer
        let waitingAnswer: String?
        let sent = ContinuousClock.now
        do {
            let response = try await HTTPClient.shared.execute(outbound, timeout: Self.timeout)
            status = HTTPResponse.Status(code: Int(response.status.code))
            waitingAnswer = response.headers.first(name: Self.waitingHeader.rawName)
            for header in response.headers where !Self.notForwarded.contains(header.name.lowercased()) {
                if let name = HTTPField.Name(header.name) { headers.append(HTTPField(name: name, value: header.value)) }
            }
            answer = try await response.body.collect(upTo: Limits.maximumRequestBodyBytes * 4)
        } catch {
            metrics.matchmakingForwarded.unreachable.increment()
            logger.warning(
                "the node holding a game's matchmaking queue did not answer",
                metadata: [LogKey.node: "\(owner.id)", LogKey.error: "\(error)"])
            throw APIError.queueNodeUnavailable
        }
        metrics.matchmakingForwarded.answered.increment()
        metrics.matchmakingForwardSeconds.recordNanoseconds((ContinuousClock.now - sent).inNanoseconds)
        if channelOpen {
            sessions.withLock { sessions in
                sessions[session.sessionID, default: ForwardedSession()].owners[owner.id] = owner.url
            }
            noteWaiting(
                answer: waitingAnswer, playerID: session.playerID, bundleID: try context.requireDevice().game.bundleID,
                session: session.sessionID, owner: owner.id)
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: answer))
    }

    /// Keeps the request the owner says waits in its queue for the session after the call (``waitingHeader``), or
    /// forgets it when the owner says none does; an answer without the header (an error) changes nothing.
    private func noteWaiting(answer: String?, playerID: String, bundleID: String, session: String, owner: String) {
        guard let answer else { return }
        let waiting = answer.isEmpty ? nil : WaitingElsewhere(playerID: playerID, requestID: answer, bundleID: bundleID, ownerID: owner)
        sessions.withLock { sessions in
            if let waiting {
                sessions[session, default: ForwardedSession()].waiting = waiting
            } else if sessions[session]?.waiting?.ownerID == owner {
                sessions[session]?.waiting = nil
            }
        }
    }

    /// The device's last realtime channel here closed: the owners its requests went to take them out of their queues.
    func channelClosed(sessionID: String) async {
        guard let forwarded = sessions.withLock({ $0.removeValue(forKey: sessionID) }) else { return }
        for (ownerID, url) in forwarded.owners {
            await tell(url, "/internal/v1/matchmaking/channels/\(sessionID)/closed", owner: ownerID)
        }
    }

    /// A player declined an invitation outside the game (the Game Center app) on this node: its owner updates the
    /// forming match.
    func invitationDeclined(_ invitationID: String, owner: (id: String, url: String)) async {
        await tell(owner.url, "/internal/v1/matchmaking/invitations/\(invitationID)/declined", owner: owner.id)
    }

    /// Asks the owner of `bundleID`'s queue in `environment` for the request `playerID` waits with there (the studio's
    /// view, ``MatchmakingService/waitingRequest(playerID:bundleID:environment:)``). Throws the owner's refusal as it
    /// came, or ``APIError/queueNodeUnavailable`` when the owner cannot be reached or answers nothing readable.
    func waitingRequest(playerID: String, bundleID: String, environment: String, owner: (id: String, url: String)) async throws -> MatchRequestStatus {
        guard !owner.url.isEmpty else { throw APIError.queueNodeUnreachable(owner.id) }
        let player = playerID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? playerID
        var request = HTTPClientRequest(
            url: Self.url(owner.url, "/internal/v1/matchmaking/games/\(bundleID)/players/\(player)/request?environment=\(environment)"))
        request.headers.add(name: Self.keyHeader.rawName, value: key)
        request.headers.add(name: Self.nodeHeader.rawName, value: nodeID)
        let (status, body): (UInt, ByteBuffer)
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: Self.timeout)
            (status, body) = (response.status.code, try await response.body.collect(upTo: Limits.maximumRequestBodyBytes * 4))
        } catch {
            logger.warning(
                "the node holding a game's matchmaking queue did not answer", metadata: [LogKey.node: "\(owner.id)", LogKey.error: "\(error)"])
            throw APIError.queueNodeUnavailable
        }
        let decoder = WireCoding.makeDecoder()
        if status == 200, let answer = try? decoder.decode(MatchRequestStatus.self, from: body) { return answer }
        if let refusal = try? decoder.decode(ErrorBody.self, from: body), let code = WireErrorCode(rawValue: refusal.code) {
            throw APIError(code, refusal.message)
        }
        logger.warning("the node holding a game's matchmaking queue answered what this node cannot read", metadata: [LogKey.node: "\(owner.id)"])
        throw APIError.queueNodeUnavailable
    }

    private func tell(_ url: String, _ path: String, owner: String) async {
        var request = HTTPClientRequest(url: Self.url(url, path))
        request.method = .POST
        request.headers.add(name: Self.keyHeader.rawName, value: key)
        request.headers.add(name: Self.nodeHeader.rawName, value: nodeID)
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: Self.timeout)
            _ = try await response.body.collect(upTo: 64 * 1024)
        } catch {
            logger.info("could not tell another node about matchmaking", metadata: [LogKey.node: "\(owner)", LogKey.error: "\(error)"])
        }
    }

    /// Whether requests wait at other nodes (so their health is worth reading).
    var waitsElsewhere: Bool { sessions.withLock { $0.values.contains { $0.waiting != nil } } }

    /// Fails the requests that waited at owners no longer alive (`alive`: the ids of the nodes seen alive): each
    /// player's device hears `matchRequestFailed` and its `findMatch` ends with an error.
    func failRequests(waitingAtNodesOtherThan alive: Set<String>) async {
        let lost = sessions.withLock { sessions -> [WaitingElsewhere] in
            var lost: [WaitingElsewhere] = []
            for (session, forwarded) in sessions {
                guard let waiting = forwarded.waiting, !alive.contains(waiting.ownerID) else { continue }
                lost.append(waiting)
                sessions[session]?.waiting = nil
                sessions[session]?.owners.removeValue(forKey: waiting.ownerID)
            }
            return lost
        }
        guard !lost.isEmpty else { return }
        let now = clock.nowMillis()
        do {
            try await database.write { storage in
                for waiting in lost {
                    let event = MatchRequestFailed(
                        requestID: waiting.requestID, bundleID: waiting.bundleID,
                        reason: "the server that held the game's matchmaking queue stopped; ask again")
                    _ = try await EventLog.append(.matchRequestFailed, event, to: waiting.playerID, now: now, in: storage)
                }
            }
            for player in Set(lost.map(\.playerID)) { bus.publish(.playerEvents(playerID: player)) }
        } catch {
            logger.error("could not fail requests that waited at a node that died", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// `path` on the node at `base`.
    private static func url(_ base: String, _ path: String) -> String {
        (base.hasSuffix("/") ? String(base.dropLast()) : base) + path
    }

    /// Request and response headers that belong to one connection, or that the forwarding node sets itself.
    private static let notForwarded: Set<String> = [
        "connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade", "te", "trailer",
        "proxy-connection", "x-gamecenter-cluster-key", "x-gamecenter-forwarded-by", "x-gamecenter-channel-open",
        "x-gamecenter-waiting-request",
    ]
}
