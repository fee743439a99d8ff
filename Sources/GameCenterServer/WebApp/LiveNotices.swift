import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Hummingbird
import ServiceLifecycle

/// `GET /live`: what happens to the signed-in player while a page is open — friend requests and their acceptance,
/// match invitations, achievements unlocked — as server-sent events, so that `/app.js` shows them without a reload.
/// Pages work without it.
///
/// Each notice is `event: notice`, `id:` the event's number in the player's durable stream, and `data:` JSON
/// `{"text": …, "link": …}` (the page to answer it on). The stream starts after the player's latest event, or after
/// `Last-Event-ID` when the browser reconnects, so nothing is missed or shown twice; a comment every
/// ``heartbeat`` keeps proxies from closing it, and `event: signed-out` ends it when the session ends. The stream
/// ends when the server shuts down (the browser reconnects, to this node once it is back or to another): a stream
/// that only noticed at its next heartbeat held SIGTERM up to 15 s beyond the server's shutdown grace.
struct LiveNotices: Sendable {
    /// Between comments on a quiet stream.
    static let heartbeat: Duration = .seconds(15)
    /// Events read from storage at once.
    static let batchSize = 100

    let database: Database
    let bus: any EventBus
    let registry: GameRegistry
    let clock: ServerClock
    let responder: PageResponder

    /// Adds the route.
    func add(to router: Router<AppRequestContext>) {
        responder.get("live", on: router, .signedIn) { page in
            let session = try page.requireSession()
            let latest = try await database.read { try await $0.player(id: session.session.playerID) }?.eventSeq ?? 0
            let resumeAfter = page.request.headers[.lastEventID].flatMap { Int64($0) }.map { min(max($0, 0), latest) }
            let texts = NoticeTexts(registry: registry, locale: page.locale)
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody { writer in
                    try await stream(session.session, after: resumeAfter ?? latest, texts: texts, to: &writer)
                    try await writer.finish(nil)
                })
        }
    }

    private enum Tick: Sendable {
        case notice(BusNotice)
        case heartbeat
    }

    private func stream(
        _ session: AuthenticatedSession, after start: Int64, texts: NoticeTexts, to writer: inout any ResponseBodyWriter
    ) async throws {
        let (ticks, continuation) = AsyncStream.makeStream(of: Tick.self, bufferingPolicy: .bufferingNewest(16))
        let subscription = bus.subscribe(playerID: session.playerID, sessionID: session.sessionID) { continuation.yield(.notice($0)) }
        let beating = Task {
            while (try? await Task.sleep(for: Self.heartbeat)) != nil { continuation.yield(.heartbeat) }
        }
        defer {
            subscription.cancel()
            beating.cancel()
            continuation.finish()
        }
        try await writer.write(ByteBuffer(string: "retry: 5000\n: connected\n\n"))
        var cursor = try await send(session.playerID, after: start, texts: texts, to: &writer)
        try await withGracefulShutdownHandler {
            for await tick in ticks {
                switch tick {
                case .heartbeat:
                    guard session.expiresAt > clock.nowMillis() else { return try await signedOut(&writer) }
                    try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                case .notice(.playerEvents):
                    cursor = try await send(session.playerID, after: cursor, texts: texts, to: &writer)
                case .notice(.sessionEnded):
                    return try await signedOut(&writer)
                }
            }
        } onGracefulShutdown: {
            continuation.finish()
        }
    }

    /// Sends the notices of the player's events after `start`; returns the last event's number.
    private func send(_ playerID: String, after start: Int64, texts: NoticeTexts, to writer: inout any ResponseBodyWriter) async throws -> Int64 {
        var cursor = start
        while true {
            let after = cursor
            let batch = try await database.read { try await $0.events(playerID: playerID, after: after, limit: Self.batchSize) }
            for record in batch {
                cursor = record.seq
                guard let notice = try await texts.notice(for: record, database: database) else { continue }
                let data = String(decoding: try JSONEncoder().encode(notice), as: UTF8.self)
                try await writer.write(ByteBuffer(string: "event: notice\nid: \(record.seq)\ndata: \(data)\n\n"))
            }
            if batch.count < Self.batchSize { return cursor }
        }
    }

    private func signedOut(_ writer: inout any ResponseBodyWriter) async throws {
        try await writer.write(ByteBuffer(string: "event: signed-out\ndata: {}\n\n"))
    }
}

/// One line a page shows: what happened, and where to answer it.
struct LiveNotice: Codable, Sendable, Equatable {
    let text: String
    let link: String
}

/// The words of the notices, in the page's language where the game's manifest has it.
struct NoticeTexts: Sendable {
    let registry: GameRegistry
    let locale: PageLocale

    /// The notice for a stored event, or nil for the kinds pages do not announce (matchmaking's own traffic) and for
    /// a payload that does not read as its kind's.
    func notice(for record: EventRecord, database: Database) async throws -> LiveNotice? {
        do {
            return try await decodedNotice(for: record, database: database)
        } catch is DecodingError {
            return nil
        }
    }

    private func decodedNotice(for record: EventRecord, database: Database) async throws -> LiveNotice? {
        let decoder = WireCoding.makeDecoder()
        let payload = Data(record.payload.utf8)
        switch EventKind(rawValue: record.kind) {
        case .friendRequestReceived:
            let request = try decoder.decode(FriendRequestInfo.self, from: payload)
            return LiveNotice(text: "\(request.fromAlias) wants to be your friend", link: "/friends")
        case .friendRequestAccepted:
            let accepted = try decoder.decode(FriendRequestAccepted.self, from: payload)
            let alias = try await database.read { try await $0.player(id: accepted.playerID) }?.alias ?? "A player"
            return LiveNotice(text: "\(alias) accepted your friend request", link: "/friends")
        case .matchInvitation:
            let invitation = try decoder.decode(InvitationInfo.self, from: payload)
            let game = registry.game(bundleID: invitation.bundleID)?.name ?? invitation.bundleID
            return LiveNotice(text: "\(invitation.inviterAlias) invites you to play \(game)", link: "/invitations")
        case .achievementCompleted:
            let completed = try decoder.decode(AchievementCompleted.self, from: payload)
            guard let game = registry.game(bundleID: completed.bundleID) else { return nil }
            let title = game.achievements.first { $0.identifier == completed.identifier }.map {
                Localization.text($0.title, locale: locale.texts(of: game), fallback: game.defaultLocale)
            }
            return LiveNotice(
                text: "Achievement unlocked in \(game.name): \(title ?? completed.identifier)",
                link: PageLinks.game(game.bundleID, "achievements"))
        default:
            return nil
        }
    }
}

extension HTTPField.Name {
    /// The last event a reconnecting `EventSource` saw.
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
