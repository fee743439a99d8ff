import Foundation
import GameCenterStorage
import Hummingbird

/// The console's audit page: the append-only audit log, newest first, of every game or one (`?game=`; `-` for the
/// studio-wide entries: bans, console users), of every actor or one (`?actor=`, such as `console:ada` or `cli`),
/// paged with `?before=` an entry id.
struct ConsoleAuditPage: Sendable {
    /// Entries per page.
    static let pageSize = 50

    let database: Database
    let registry: GameRegistry
    let responder: ConsoleResponder
    let renderer: PageRenderer

    /// Adds the route.
    func add(to router: Router<AppRequestContext>) {
        responder.get("console/audit", on: router) { page in try await auditPage(page) }
    }

    private func auditPage(_ page: ConsoleRequest) async throws -> Response {
        let filter = page.query("game")
        let bundleID: String? = filter == "-" ? "" : filter
        if let filter, filter != "-", registry.game(bundleID: filter) == nil { throw APIError.unknownGame(filter) }
        let before = try page.query("before").map { text -> Int64 in
            guard let value = Int64(text), value > 0 else { throw APIError.invalidPageParameter("before", allowed: "an entry id (a whole number from 1)") }
            return value
        }
        let actor = try page.query("actor").flatMap { text -> String? in
            guard !text.isEmpty else { return nil }
            guard text.count <= 200 else { throw APIError.invalidPageParameter("actor", allowed: "an actor as the log shows it, at most 200 characters") }
            return text
        }
        let entries = try await database.read {
            try await $0.auditEntries(bundleID: bundleID, actor: actor, before: before, limit: Self.pageSize)
        }
        let games = registry.all
        let names = Dictionary(games.map { ($0.bundleID, $0.name) }) { a, _ in a }
        let rows = entries.map { entry in
            let detail = (try? JSONDecoder().decode([String: String].self, from: Data(entry.detail.utf8))) ?? [:]
            return AuditPageContent.Row(
                id: entry.entryID, time: PageDates.minute(StoredTime.date(entry.createdAt)),
                game: entry.bundleID.isEmpty ? "studio" : names[entry.bundleID] ?? entry.bundleID,
                actor: entry.actor, actorLink: "/console/audit?actor=\(PageLinks.segment(entry.actor))", action: entry.action, subject: entry.subject,
                detail: detail.isEmpty ? nil : detail.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "),
                subjectLink: entry.subject.hasPrefix("G:") ? ConsolePlayerPages.link(entry.subject) : nil)
        }
        let query = (filter.map { "game=\(PageLinks.segment($0))&" } ?? "") + (actor.map { "actor=\(PageLinks.segment($0))&" } ?? "")
        let content = AuditPageContent(
            chrome: ConsoleChrome("Audit log", section: .audit, for: page),
            choices: [
                AuditPageContent.Choice(value: "", name: "Every game and the studio", selected: filter == nil),
                AuditPageContent.Choice(value: "-", name: "Studio-wide (bans, console users)", selected: filter == "-"),
            ]
                + games.map { AuditPageContent.Choice(value: $0.bundleID, name: $0.name, selected: filter == $0.bundleID) },
            actor: actor ?? "", everyActor: actor.map { _ in "/console/audit" + (filter.map { "?game=\(PageLinks.segment($0))" } ?? "") },
            entries: rows,
            older: rows.count == Self.pageSize ? rows.last.map { "/console/audit?\(query)before=\($0.id)" } : nil)
        return renderer.render("console-audit", content)
    }
}

/// The audit page's content.
struct AuditPageContent {
    /// One entry of the game filter.
    struct Choice {
        let value: String, name: String
        let selected: Bool
    }

    /// One entry of the log.
    struct Row {
        let id: Int64
        let time: String, game: String, actor: String
        /// The log of this entry's actor alone.
        let actorLink: String
        let action: String, subject: String
        /// The entry's details (`name: value`, …), if it has any.
        let detail: String?
        /// The subject's page when it is a player.
        let subjectLink: String?
    }

    let chrome: ConsoleChrome
    let choices: [Choice]
    /// The actor whose entries alone are shown ("" for every actor's), and the page of every actor's.
    let actor: String
    let everyActor: String?
    let entries: [Row]
    /// The next (older) page, if any.
    let older: String?
}
