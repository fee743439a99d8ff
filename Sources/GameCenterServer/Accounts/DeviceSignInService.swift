import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// A game signs its player in through the Game Center app, so the game needs no sign-in form of its own: the device
/// starts a request (`POST /v1/device-sign-ins`) and opens its page; the player signs in there (or already is) and
/// confirms; the device, asking with its secret (`POST /v1/device-sign-ins/{id}/session`), then gets a session for
/// its game, once.
///
/// A request lives ``Limits/deviceSignInLifetimeSeconds``; starting one counts as a sign-in attempt of the client's
/// address (the same throttle as password sign-ins), and at most ``maximumWaiting`` wait at once on a server. Only
/// the secret's hash is stored; the request id in the page's address is no secret (confirming needs the player's
/// page session, taking the session needs the secret).
struct DeviceSignInService: Sendable {
    /// Requests that may wait at once on this server.
    static let maximumWaiting = 10_000

    let database: Database
    let accounts: AccountService
    let registry: GameRegistry
    let limiter: RateLimiter
    let clock: ServerClock

    /// Starts a sign-in for the device's game.
    func start(device: DeviceIdentity, from address: ClientAddress?) async throws -> DeviceSignIn {
        if let address { try limiter.take(.signIns, for: address.key) }
        let requestID = Credentials.newID(prefix: "dsi_"), secret = Credentials.newToken()
        let now = clock.nowMillis()
        let expiresAt = now + Int64(Limits.deviceSignInLifetimeSeconds) * 1000
        try await database.write { storage in
            guard try await storage.waitingDeviceSignIns() < Self.maximumWaiting else { throw APIError.tooManyDeviceSignIns }
            try await storage.insertDeviceSignIn(
                DeviceSignInRecord(
                    requestID: requestID, secretHash: Credentials.tokenHash(secret), bundleID: device.game.bundleID,
                    environment: device.environment.rawValue, playerID: nil, expiresAt: expiresAt), now: now)
        }
        return DeviceSignIn(requestID: requestID, secret: secret, path: "/device-sign-in/\(requestID)", expiresAt: StoredTime.date(expiresAt))
    }

    /// The request a page shows, with its game; `account.device_sign_in_expired` when it is gone, expired or confirmed.
    func waiting(_ requestID: String) async throws -> (request: DeviceSignInRecord, game: Game) {
        guard requestID.count <= 100, let request = try await database.read({ try await $0.deviceSignIn(requestID: requestID) }),
            request.playerID == nil, request.declinedAt == nil, request.expiresAt > clock.nowMillis(),
            let game = registry.game(bundleID: request.bundleID)
        else { throw APIError.deviceSignInExpired }
        return (request, game)
    }

    /// The player of a page session answers "Not now": the device hears `account.device_sign_in_declined`.
    func decline(_ requestID: String, by session: PageSession) async throws {
        _ = try await waiting(requestID)
        guard try await database.write({ try await $0.declineDeviceSignIn(requestID: requestID, now: clock.nowMillis()) }) else {
            throw APIError.deviceSignInExpired
        }
    }

    /// The player of a page session confirms the request: the device may take its session now.
    func confirm(_ requestID: String, by session: PageSession) async throws {
        let (request, _) = try await waiting(requestID)
        guard request.environment == session.environment.rawValue else { throw APIError.deviceSignInOtherEnvironment(request.environment) }
        guard try await database.write({ try await $0.confirmDeviceSignIn(requestID: requestID, playerID: session.session.playerID, now: clock.nowMillis()) })
        else { throw APIError.deviceSignInExpired }
    }

    /// The device's session once the player confirmed; nil while the request waits; `account.device_sign_in_declined`
    /// once the player answered "Not now".
    func claim(_ requestID: String, secret: String, device: DeviceIdentity) async throws -> SessionResponse? {
        guard requestID.count <= 100, secret.count <= 200 else { throw APIError.deviceSignInExpired }
        let secretHash = Credentials.tokenHash(secret)
        let now = clock.nowMillis()
        guard let request = try await database.read({ try await $0.deviceSignIn(requestID: requestID) }), request.secretHash == secretHash,
            request.bundleID == device.game.bundleID, request.environment == device.environment.rawValue, request.expiresAt > now
        else { throw APIError.deviceSignInExpired }
        guard request.declinedAt == nil else { throw APIError.deviceSignInDeclined }
        guard request.playerID != nil else { return nil }
        guard let taken = try await database.write({ try await $0.takeConfirmedDeviceSignIn(requestID: requestID, secretHash: secretHash) }),
            let playerID = taken.playerID
        else { throw APIError.deviceSignInExpired }
        return try await accounts.openGameSession(forPlayerID: playerID, device: device)
    }
}

/// `POST /v1/device-sign-ins` and `POST /v1/device-sign-ins/{requestID}/session` (a device, before sign-in).
struct DeviceSignInRoutes: Sendable {
    let signIns: DeviceSignInService

    /// Adds the JSON routes.
    func addPublic(to group: RouterGroup<AppRequestContext>) {
        group.post("device-sign-ins") { _, context -> EditedResponse<DeviceSignIn> in
            EditedResponse(
                status: .created, response: try await signIns.start(device: context.requireDevice(), from: ClientAddress(context.remoteAddress)))
        }
        group.post("device-sign-ins/{requestID}/session") { request, context -> Response in
            let claim = try await request.decode(as: DeviceSignInClaim.self, context: context)
            let requestID = context.parameters.get("requestID") ?? ""
            guard let session = try await signIns.claim(requestID, secret: claim.secret, device: context.requireDevice()) else {
                return Response(status: .accepted, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
            }
            return try session.response(from: request, context: context)
        }
    }
}

extension DeviceSignIn: ResponseEncodable {}

extension APIError {
    /// A device sign-in is gone, expired, taken, or its secret is wrong.
    static let deviceSignInExpired = APIError(
        .accountDeviceSignInExpired,
        "this sign-in from a game has expired or was used already (it lasts \(Limits.deviceSignInLifetimeSeconds / 60) minutes); start it again from the game")

    /// The player answered "Not now" to a device sign-in.
    static let deviceSignInDeclined = APIError(
        .accountDeviceSignInDeclined, "the player chose not to sign in to Game Center now (\"Not now\" in the Game Center app)")

    /// The player confirming a device sign-in is signed in to the other environment.
    static func deviceSignInOtherEnvironment(_ environment: String) -> APIError {
        APIError(
            .requestInvalidParameter,
            "the game on your device plays in the \(environment) environment; sign out here and sign in to \(environment) to confirm")
    }

    /// More device sign-ins wait than ``DeviceSignInService/maximumWaiting``.
    static let tooManyDeviceSignIns = APIError(
        .requestRateLimited, "too many sign-ins from games are waiting on this server; try again in a minute", retryAfterSeconds: 60)
}
