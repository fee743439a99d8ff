import Foundation
import GameCenterProtocol
import Hummingbird

/// The console's owner pages: server keys (``ServerKeyService``), webhook endpoints (``WebhookService``) and console
/// users (``ConsoleUsers``). Every role sees the lists; only owners change them, each change written to the audit log.
/// A new key's private half and a new endpoint's secret are shown once, on the page answering the form.
struct ConsoleStudioPages: Sendable {
    let registry: GameRegistry
    let keys: ServerKeyService
    let webhooks: WebhookService
    let dispatcher: WebhookDispatcher
    let users: ConsoleUsers
    let audit: AuditLog
    let responder: ConsoleResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("console/keys", on: router) { page in try await keysPage(page, created: nil, replaced: nil) }
        responder.post("console/keys", on: router, .keys) { page in
            let session = try page.requireSession()
            let permissions = try page.form.values("permission").map { value -> ServerKeyPermission in
                guard let permission = ServerKeyPermission(rawValue: value) else {
                    throw APIError.invalidPageParameter("permission", allowed: ServerKeyPermission.allCases.map(\.rawValue).joined(separator: ", "))
                }
                return permission
            }
            let name = page.field("name")
            let created = try await keys.create(
                ServerKeyCreateRequest(
                    bundleID: page.field("game"), environment: try Self.environment(page.field("environment")), permissions: permissions,
                    name: name.isEmpty ? nil : name))
            try await audit.record(
                bundleID: created.key.bundleID, actor: session.actor, action: "key.created", subject: created.key.keyID,
                detail: ["environment": created.key.environment.rawValue, "permissions": created.key.permissions.map(\.rawValue).joined(separator: " ")])
            return try await keysPage(page, created: created, replaced: nil)
        }
        responder.post("console/keys/rotate", on: router, .keys) { page in
            let session = try page.requireSession()
            let keyID = page.field("key")
            guard let hours = Int64(page.field("graceHours")), Self.graceHours.contains(hours) else {
                throw APIError.invalidPageParameter("graceHours", allowed: Self.graceHours.map(String.init).joined(separator: ", "))
            }
            let created = try await keys.rotate(keyID: keyID, graceSeconds: hours * 3_600)
            try await audit.record(
                bundleID: created.key.bundleID, actor: session.actor, action: "key.rotated", subject: created.key.keyID,
                detail: [
                    "replaces": keyID, "environment": created.key.environment.rawValue,
                    "permissions": created.key.permissions.map(\.rawValue).joined(separator: " "),
                ])
            return try await keysPage(page, created: created, replaced: keyID)
        }
        responder.post("console/keys/revoke", on: router, .keys) { page in
            let session = try page.requireSession()
            let revoked = try await keys.revoke(keyID: page.field("key"))
            try await audit.record(
                bundleID: revoked.bundleID, actor: session.actor, action: "key.revoked", subject: revoked.keyID,
                detail: ["environment": revoked.environment.rawValue, "permissions": revoked.permissions.map(\.rawValue).joined(separator: " ")])
            return PageRequest.redirect(to: "/console/keys?revoked=\(PageLinks.segment(revoked.keyID))")
        }
        responder.get("console/webhooks", on: router) { page in try await webhooksPage(page, created: nil) }
        responder.post("console/webhooks", on: router, .webhooks) { page in
            let session = try page.requireSession()
            let events = try page.form.values("event").map { value -> WebhookEventType in
                guard let event = WebhookEventType(rawValue: value) else {
                    throw APIError.invalidPageParameter("event", allowed: WebhookEventType.allCases.map(\.rawValue).joined(separator: ", "))
                }
                return event
            }
            let request = WebhookEndpointCreateRequest(
                bundleID: page.field("game"), environment: try Self.environment(page.field("environment")), url: page.field("url"), events: events)
            let created = try await webhooks.create(request)
            dispatcher.endpointsChanged()
            try await audit.record(
                bundleID: request.bundleID, actor: session.actor, action: "webhook.added", subject: created.endpoint.endpointID,
                detail: ["url": request.url, "events": request.events.map(\.rawValue).joined(separator: " ")])
            return try await webhooksPage(page, created: created)
        }
        responder.post("console/webhooks/remove", on: router, .webhooks) { page in
            let session = try page.requireSession()
            let removed = try await webhooks.remove(endpointID: page.field("endpoint"))
            dispatcher.endpointsChanged()
            try await audit.record(bundleID: removed.bundleID, actor: session.actor, action: "webhook.removed", subject: removed.endpointID)
            return PageRequest.redirect(to: "/console/webhooks?removed=1")
        }
        responder.get("console/webhooks/{endpointID}", on: router) { page in try await deliveriesPage(page) }
        responder.post("console/webhooks/{endpointID}/replay", on: router, .webhooks) { page in
            let session = try page.requireSession()
            let endpointID = try page.context.parameters.require("endpointID")
            guard let deliveryID = Int64(page.field("delivery")) else {
                throw APIError.invalidPageParameter("delivery", allowed: "a delivery's number")
            }
            let endpoint = try await webhooks.replay(endpointID: endpointID, deliveryID: deliveryID)
            dispatcher.endpointsChanged()
            try await audit.record(
                bundleID: endpoint.bundleID, actor: session.actor, action: "webhook.replayed", subject: endpointID, detail: ["delivery": "\(deliveryID)"])
            return PageRequest.redirect(to: "/console/webhooks/\(PageLinks.segment(endpointID))?replayed=\(deliveryID)")
        }
        responder.get("console/users", on: router) { page in try await usersPage(page) }
        responder.post("console/users", on: router, .users) { page in
            let session = try page.requireSession()
            guard let role = ConsoleRole(rawValue: page.field("role")) else {
                throw APIError.consoleInvalidUser("a console user's role is one of \(ConsoleRole.names)")
            }
            try await users.add(name: page.field("name"), role: role, password: page.form["password"] ?? "", actor: session.actor)
            return PageRequest.redirect(to: "/console/users?added=\(PageLinks.segment(page.field("name")))")
        }
        responder.post("console/users/remove", on: router, .users) { page in
            let session = try page.requireSession()
            let name = page.field("name")
            guard name != session.userName else {
                throw APIError.consoleInvalidUser("you cannot remove yourself; another owner can")
            }
            try await users.remove(name: name, actor: session.actor)
            return PageRequest.redirect(to: "/console/users?removed=\(PageLinks.segment(name))")
        }
    }

    /// How long a rotated key keeps working beside its successor, the console's choices (hours).
    static let graceHours: [Int64] = [0, 1, 24, 168, 720]

    /// `created`: a key just made (shown with its private half, once); `replaced`: the key it replaces, when rotated.
    private func keysPage(_ page: ConsoleRequest, created: CreatedServerKey?, replaced: String?) async throws -> Response {
        let list = try await keys.list(bundleID: nil)
        let old = replaced.flatMap { id in list.keys.first { $0.keyID == id } }
        let content = KeysPage(
            chrome: ConsoleChrome("Server keys", section: .keys, for: page), mayManage: page.may(.keys), games: Self.games(registry),
            permissions: ServerKeyPermission.allCases.map(\.rawValue),
            keys: list.keys.map { key in
                KeysPage.Key(
                    id: key.keyID, name: key.name, game: key.bundleID, environment: key.environment.rawValue,
                    permissions: key.permissions.map(\.rawValue).joined(separator: ", "),
                    state: key.revokedAt.map { "revoked \(PageDates.minute($0))" } ?? key.expiresAt.map { "expires \(PageDates.minute($0))" } ?? "active",
                    active: key.revokedAt == nil, rotatable: key.isActive && key.expiresAt == nil)
            },
            graceChoices: Self.graceHours.map { hours in
                KeysPage.Grace(
                    hours: hours, title: hours == 0 ? "none: stop it now" : hours < 24 ? "\(hours) hour" : hours == 24 ? "1 day" : "\(hours / 24) days",
                    isDefault: hours * 3_600 == ServerKeyService.defaultGraceSeconds)
            },
            created: created.map {
                KeysPage.Created(
                    id: $0.key.keyID, issuer: $0.key.issuerID, privateKey: $0.privateKey, replaces: replaced,
                    oldWorksUntil: old?.expiresAt.map { PageDates.minute($0) })
            },
            revoked: page.query("revoked"))
        return renderer.render("console-keys", content, status: created == nil ? .ok : .created)
    }

    private func webhooksPage(_ page: ConsoleRequest, created: CreatedWebhookEndpoint?) async throws -> Response {
        let list = try await webhooks.list(bundleID: nil)
        let content = WebhooksPage(
            chrome: ConsoleChrome("Webhooks", section: .webhooks, for: page), mayManage: page.may(.webhooks), games: Self.games(registry),
            events: WebhookEventType.allCases.map(\.rawValue),
            endpoints: list.endpoints.map {
                WebhooksPage.Endpoint(
                    id: $0.endpointID, url: $0.url, game: $0.bundleID, environment: $0.environment.rawValue,
                    events: $0.events.map(\.rawValue).joined(separator: ", "), created: PageDates.minute($0.createdAt))
            },
            created: created.map { WebhooksPage.Created(id: $0.endpoint.endpointID, secret: $0.secret) }, removed: page.query("removed") != nil)
        return renderer.render("console-webhooks", content, status: created == nil ? .ok : .created)
    }

    /// An endpoint's latest deliveries (all, or of one state), newest first; dead ones can be put back in line.
    private func deliveriesPage(_ page: ConsoleRequest) async throws -> Response {
        let endpointID = try page.context.parameters.require("endpointID")
        let state = page.query("state").flatMap { $0.isEmpty ? nil : $0 }
        guard let endpoint = try await webhooks.list(bundleID: nil).endpoints.first(where: { $0.endpointID == endpointID }) else {
            throw APIError.pageNotFound(page.request.uri.path)
        }
        let list = try await webhooks.deliveries(endpointID: endpointID, state: state, limit: Self.deliveriesShown)
        let base = "/console/webhooks/\(PageLinks.segment(endpointID))"
        let content = DeliveriesPage(
            chrome: ConsoleChrome("Deliveries to \(endpointID)", section: .webhooks, for: page), url: endpoint.url, game: endpoint.bundleID,
            environment: endpoint.environment.rawValue, mayReplay: page.may(.webhooks), action: "\(base)/replay",
            states: [("", "All"), ("pending", "Pending"), ("delivered", "Delivered"), ("dead", "Dead")].map { value, title in
                ConsoleTab(link: value.isEmpty ? base : "\(base)?state=\(value)", title: title, current: (state ?? "") == value)
            },
            deliveries: list.deliveries.map { delivery in
                DeliveriesPage.Delivery(
                    id: delivery.deliveryID, event: delivery.eventType, state: delivery.state, dead: delivery.state == "dead", attempts: delivery.attempts,
                    created: PageDates.minute(delivery.createdAt),
                    when: delivery.deliveredAt.map { "delivered \(PageDates.minute($0))" }
                        ?? (delivery.state == "pending" ? "next try \(PageDates.minute(delivery.nextAttemptAt))" : "gave up"),
                    error: delivery.lastError)
            },
            replayed: page.query("replayed"))
        return renderer.render("console-deliveries", content)
    }

    /// Deliveries an endpoint's page shows.
    static let deliveriesShown = 50

    private func usersPage(_ page: ConsoleRequest) async throws -> Response {
        let content = UsersPage(
            chrome: ConsoleChrome("Console users", section: .users, for: page), mayManage: page.may(.users),
            roles: ConsoleRole.allCases.reversed().map(\.rawValue),
            users: try await users.list().map {
                UsersPage.User(name: $0.name, role: $0.role.rawValue, added: PageDates.minute($0.createdAt), isMe: $0.name == page.session?.userName)
            },
            added: page.query("added"), removed: page.query("removed"))
        return renderer.render("console-users", content)
    }

    private static func games(_ registry: GameRegistry) -> [StudioGame] {
        registry.all.map { StudioGame(bundleID: $0.bundleID, name: $0.name) }
    }

    private static func environment(_ text: String) throws -> GameCenterProtocol.Environment {
        guard let environment = GameCenterProtocol.Environment(rawValue: text) else {
            throw APIError.invalidPageParameter("environment", allowed: "'sandbox' or 'live'")
        }
        return environment
    }
}

/// A game to choose in a form.
struct StudioGame {
    let bundleID: String, name: String
}

/// The keys page's content.
struct KeysPage {
    /// One key.
    struct Key {
        let id: String, name: String, game: String, environment: String, permissions: String, state: String
        let active: Bool
        /// Active and not rotated already.
        let rotatable: Bool
    }

    /// One choice of how long a rotated key keeps working.
    struct Grace {
        let hours: Int64, title: String
        let isDefault: Bool
    }

    /// A key just made: its private half, shown once; when rotated, the key it replaces and until when that one works.
    struct Created {
        let id: String, issuer: String, privateKey: String
        let replaces: String?
        let oldWorksUntil: String?
    }

    let chrome: ConsoleChrome
    let mayManage: Bool
    let games: [StudioGame]
    let permissions: [String]
    let keys: [Key]
    let graceChoices: [Grace]
    let created: Created?
    let revoked: String?
}

/// The webhooks page's content.
struct WebhooksPage {
    /// One endpoint (its secret is never shown again).
    struct Endpoint {
        let id: String, url: String, game: String, environment: String, events: String, created: String
    }

    /// An endpoint just made: its signing secret, shown once.
    struct Created {
        let id: String, secret: String
    }

    let chrome: ConsoleChrome
    let mayManage: Bool
    let games: [StudioGame]
    let events: [String]
    let endpoints: [Endpoint]
    let created: Created?
    let removed: Bool
}

/// A webhook endpoint's deliveries page's content.
struct DeliveriesPage {
    /// One delivery.
    struct Delivery {
        let id: Int64
        let event: String, state: String
        /// Whether it was given up on (it can be replayed).
        let dead: Bool
        let attempts: Int64
        let created: String
        /// When it was delivered, or will be tried next.
        let when: String
        let error: String?
    }

    let chrome: ConsoleChrome
    let url: String, game: String, environment: String
    /// Whether the reader may replay a dead delivery, and the form's address.
    let mayReplay: Bool
    let action: String
    let states: [ConsoleTab]
    let deliveries: [Delivery]
    /// The delivery just put back in line.
    let replayed: String?
}

/// The console users page's content.
struct UsersPage {
    /// One user.
    struct User {
        let name: String, role: String, added: String
        /// Whether it is the reader.
        let isMe: Bool
    }

    let chrome: ConsoleChrome
    let mayManage: Bool
    let roles: [String]
    let users: [User]
    let added: String?, removed: String?
}
