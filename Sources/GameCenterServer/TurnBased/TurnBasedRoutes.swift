import Foundation
import GameCenterProtocol
import HTTPTypes
import Hummingbird
import NIOCore

/// HTTP for turn-based matches: find, list and load, the turn's writes, acts out of turn, exchanges, rematch.
struct TurnBasedRoutes {
    let turns: TurnBasedService
    /// Counts each player's writes (`turn-writes`), before their body is read.
    let limiter: RateLimiter

    /// Charges one turn-based write to the signed-in player.
    private func charge(_ context: AppRequestContext) throws {
        try limiter.take(.turnWrites, for: context.requireSession().playerID)
    }

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.get("turn-matches") { _, context -> TurnBasedMatchList in
            TurnBasedMatchList(matches: try await turns.matches(device: context.requireDevice(), session: context.requireSession()))
        }
        group.post("turn-matches") { request, context -> TurnBasedMatchInfo in
            try charge(context)
            let body = try await request.decode(as: TurnBasedFindBody.self, context: context)
            return try await turns.find(body, device: context.requireDevice(), session: context.requireSession())
        }
        group.get("turn-matches/{matchID}") { _, context -> TurnBasedMatchInfo in
            try await turns.match(id: context.parameters.require("matchID"), device: context.requireDevice(), session: context.requireSession())
        }
        group.get("turn-matches/{matchID}/data") { _, context -> Response in
            let data = try await turns.matchData(
                id: context.parameters.require("matchID"), device: context.requireDevice(), session: context.requireSession())
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        group.post("turn-matches/{matchID}/turn") { request, context -> TurnBasedMatchInfo in
            try charge(context)
            let device = try context.requireDevice()
            let body = try await Self.decode(
                TurnBasedTurnBody.self, from: request, carrying: device.game.turnBased.matchDataBytes, what: "match data", context: context)
            return try await turns.turn(id: context.parameters.require("matchID"), body, device: device, session: context.requireSession())
        }
        group.post("turn-matches/{matchID}/participant") { request, context -> TurnBasedMatchInfo in
            try charge(context)
            let body = try await request.decode(as: TurnBasedParticipantBody.self, context: context)
            return try await turns.participant(
                id: context.parameters.require("matchID"), body, device: context.requireDevice(), session: context.requireSession())
        }
        group.post("turn-matches/{matchID}/rematch") { _, context -> TurnBasedMatchInfo in
            try charge(context)
            return try await turns.rematch(id: context.parameters.require("matchID"), device: context.requireDevice(), session: context.requireSession())
        }
        group.post("turn-matches/{matchID}/exchanges") { request, context -> TurnBasedExchangeSent in
            try charge(context)
            let device = try context.requireDevice()
            let body = try await Self.decode(
                TurnBasedExchangeBody.self, from: request, carrying: device.game.turnBased.exchangeDataBytes, what: "exchange data",
                context: context)
            return try await turns.sendExchange(id: context.parameters.require("matchID"), body, device: device, session: context.requireSession())
        }
        group.post("turn-matches/{matchID}/exchanges/{exchangeID}") { request, context -> TurnBasedMatchInfo in
            try charge(context)
            let device = try context.requireDevice()
            let body = try await Self.decode(
                TurnBasedExchangeAnswerBody.self, from: request, carrying: device.game.turnBased.exchangeDataBytes, what: "a reply",
                context: context)
            return try await turns.answerExchange(
                id: context.parameters.require("matchID"), exchangeID: context.parameters.require("exchangeID"), body, device: device,
                session: context.requireSession())
        }
    }

    /// Decodes a body that carries up to `dataLimit` bytes of data (as base64): the usual body limit plus the data's.
    /// A body whose declared length is over it is refused before it is read.
    static func decode<Body: Decodable>(
        _ type: Body.Type, from request: Request, carrying dataLimit: Int, what: String, context: AppRequestContext
    ) async throws -> Body {
        try await decode(
            type, from: request, carrying: dataLimit,
            tooLarge: APIError(.turnMatchDataTooLarge, "the request carries more than this game's \(dataLimit) bytes of \(what)"), context: context)
    }

    /// ``decode(_:from:carrying:what:context:)`` with the error for a body over the limit.
    static func decode<Body: Decodable>(
        _ type: Body.Type, from request: Request, carrying dataLimit: Int, tooLarge: APIError, context: AppRequestContext
    ) async throws -> Body {
        let limit = Limits.maximumRequestBodyBytes + (dataLimit + 2) / 3 * 4
        let bytes = try await request.body(upTo: limit, orThrow: tooLarge)
        do {
            return try WireCoding.makeDecoder().decode(type, from: bytes)
        } catch let error as DecodingError {
            throw APIError.malformedBody(WireRequestDecoder.describe(error))
        }
    }
}

extension TurnBasedMatchInfo: ResponseEncodable {}
extension TurnBasedMatchList: ResponseEncodable {}
extension TurnBasedExchangeSent: ResponseEncodable {}
