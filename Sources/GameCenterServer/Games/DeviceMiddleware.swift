import Crypto
import Foundation
import GameCenterProtocol
import HTTPTypes
import Hummingbird

/// The game, environment and locale a device named in its headers.
package struct DeviceIdentity: Sendable {
    package var game: Game
    package var environment: GameCenterProtocol.Environment
    /// BCP 47 locale for localized texts; the game's default when the device sent none.
    package var locale: String

    /// A device's identity as its headers named it.
    package init(game: Game, environment: GameCenterProtocol.Environment, locale: String) {
        self.game = game
        self.environment = environment
        self.locale = locale
    }
}

/// Resolves the device's game from `X-GameCenter-Bundle-ID`, `-Environment`, `-Client-Key` and `-Locale`.
struct DeviceMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let registry: GameRegistry

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.device = try identify(request.headers)
        return try await next(request, context)
    }

    func identify(_ headers: HTTPFields) throws -> DeviceIdentity {
        guard let bundleID = headers[HTTPField.Name.bundleID], !bundleID.isEmpty else {
            throw APIError.gameRequired
        }
        guard let game = registry.game(bundleID: bundleID) else { throw APIError.gameUnrecognized(bundleID) }
        let environmentName = headers[HTTPField.Name.environment] ?? ""
        guard let environment = GameCenterProtocol.Environment(rawValue: environmentName) else {
            throw APIError.invalidParameter("\(DeviceHeader.environment) must be 'sandbox' or 'live'")
        }
        if let expected = game.clientKey {
            let presented = headers[HTTPField.Name.clientKey] ?? ""
            guard Self.constantTimeEquals(presented, expected) else { throw APIError.clientKeyRejected(bundleID) }
        }
        var locale = game.defaultLocale
        if let requested = headers[HTTPField.Name.locale], requested.count <= 35,
            requested.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        {
            locale = requested
        }
        return DeviceIdentity(game: game, environment: environment, locale: locale)
    }

    private static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        Data(SHA256.hash(data: Data(a.utf8))) == Data(SHA256.hash(data: Data(b.utf8)))
    }
}

extension APIError {
    /// The device did not name its game.
    static let gameRequired = APIError(.gameMissing, "send the game's bundle id in the \(DeviceHeader.bundleID) header")

    /// No manifest on this server has this bundle id.
    static func gameUnrecognized(_ bundleID: String) -> APIError {
        let shown = bundleID.count <= 100 ? bundleID : String(bundleID.prefix(100)) + "…"
        return APIError(.gameUnrecognized, "no game with bundle id '\(shown)' is configured on this server")
    }

    /// The game requires a client key and the device sent none or a wrong one.
    static func clientKeyRejected(_ bundleID: String) -> APIError {
        APIError(.gameClientKeyRejected, "game '\(bundleID)' requires its client key in \(DeviceHeader.clientKey); the key sent is missing or wrong")
    }
}

extension HTTPField.Name {
    static let bundleID = HTTPField.Name(DeviceHeader.bundleID)!
    static let environment = HTTPField.Name(DeviceHeader.environment)!
    static let clientKey = HTTPField.Name(DeviceHeader.clientKey)!
    static let locale = HTTPField.Name(DeviceHeader.locale)!
}
