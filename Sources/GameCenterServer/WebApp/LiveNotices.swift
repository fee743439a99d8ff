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
/// It is the player's event stream (``PlayerEventStream``), the same the game's realtime channel carries, written
/// as server-sent events. Each notice is `event: notice`, `id:` the event's number in the player's durable stream,
/// and `data:` JSON `{"text": …, "link": …}` (the page to answer it on). The stream starts after the player's latest
/// event, or after `Last-Event-ID` when the browser reconnects, so nothing is missed or shown twice; a comment at each
/// heartbeat keeps proxies from closing it, `event: signed-out` ends it when the session ends (signed out, revoked or
/// expired), and a browser that stops reading is disconnected after ``writeTimeout``. The stream ends when the server
/// shuts down (the browser reconnects, to this node once it is back or to another): a stream that only noticed at its
/// next heartbeat held SIGTERM up to 15 s beyond the server's shutdown grace.
struct LiveNotices: Sendable {
    /// How long one write may wait for a browser that does not read.
    static let writeTimeout: Duration = .seconds(30)

    let database: Database
    let bus: any EventBus
    /// The server's heartbeats.
    let ticker: HeartbeatTicker
    let registry: GameRegistry
    let clock: ServerClock
    let responder: PageResponder

    /// Adds the route.
    func add(to router: Router<AppRequestContext>) {
        responder.get("live", on: router, .signedIn) { page in
            let session = try page.requireSession()
            let texts = NoticeTexts(registry: registry, locale: page.locale)
            let lastEventID = page.request.headers[.lastEventID].flatMap { Int64($0) }
            let context = page.context
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody { writer in
                    let events = PlayerEventStream(
                        session: session.session, database: database, bus: bus, ticker: ticker, clock: clock,
                        writeTimeout: Self.writeTimeout, logger: context.logger, abort: { context.closeConnection() })
                    defer { events.close() }
                    try await stream(events, after: lastEventID, texts: texts, to: &writer)
                    try await writer.finish(nil)
                })
        }
    }

    private func stream(
        _ events: PlayerEventStream, after lastEventID: Int64?, texts: NoticeTexts, to writer: inout any ResponseBodyWriter
    ) async throws {
        let (latest, revoked) = try await events.current()
        try await write("retry: 5000\n: connected\n\n", to: &writer, events)
        if revoked { return try await signedOut(&writer, events) }
        var cursor = try await send(after: lastEventID.map { min(max($0, 0), latest) } ?? latest, events, texts: texts, to: &writer)
        try await withGracefulShutdownHandler {
            for await wake in events.wakes {
                switch wake {
                case .beat:
                    try await write(": heartbeat\n\n", to: &writer, events)
                case .eventsAppended:
                    cursor = try await send(after: cursor, events, texts: texts, to: &writer)
                case .sessionEnded:
                    return try await signedOut(&writer, events)
                case .shutdown, .inboundClosed:
                    return
                case .heard:
                    continue
                }
            }
        } onGracefulShutdown: {
            events.yield(.shutdown)
        }
    }

    /// Sends the notices of the player's events after `start`; returns the last event's number.
    private func send(
        after start: Int64, _ events: PlayerEventStream, texts: NoticeTexts, to writer: inout any ResponseBodyWriter
    ) async throws -> Int64 {
        try await events.catchUp(after: start) { record in
            guard let notice = try await texts.notice(for: record, database: database) else { return }
            let data = String(decoding: try JSONEncoder().encode(notice), as: UTF8.self)
            try await write("event: notice\nid: \(record.seq)\ndata: \(data)\n\n", to: &writer, events)
        }
    }

    /// Writes `text` under the stream's write deadline.
    private func write(_ text: String, to writer: inout any ResponseBodyWriter, _ events: PlayerEventStream) async throws {
        try await events.watched { try await writer.write(ByteBuffer(string: text)) }
    }

    private func signedOut(_ writer: inout any ResponseBodyWriter, _ events: PlayerEventStream) async throws {
        try await write("event: signed-out\ndata: {}\n\n", to: &writer, events)
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
        case .turnBased:
            let change = try decoder.decode(TurnBasedEventInfo.self, from: payload)
            let game = registry.game(bundleID: change.match.bundleID)?.name ?? change.match.bundleID
            switch change.kind {
            case .invited: return LiveNotice(text: "You are invited to a turn-based match of \(game)", link: "/turns")
            case .matchEnded: return LiveNotice(text: "A match of \(game) ended", link: "/turns")
            default: return change.becameActive ? LiveNotice(text: "Your turn in \(game)", link: "/turns") : nil
            }
        default:
            return nil
        }
    }
}

extension HTTPField.Name {
    /// The last event a reconnecting `EventSource` saw.
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
