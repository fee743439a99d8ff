import Foundation
import GameCenterProtocol
import HTTPTypes
import Hummingbird
import NIOCore

/// HTTP for saved games: list, upload in chunks (resumable), finish, download by chunk, delete.
struct SavedGameRoutes {
    let saves: SavedGameService

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.get("saved-games") { _, context -> SavedGameList in
            try await saves.list(device: context.requireDevice(), session: context.requireSession())
        }
        group.delete("saved-games") { request, context -> HTTPResponse.Status in
            guard let name = request.uri.queryParameters.get("name") else {
                throw APIError.saveInvalidRequest("name the save to delete: DELETE /v1/saved-games?name=…")
            }
            try await saves.delete(name: name, device: context.requireDevice(), session: context.requireSession())
            return .noContent
        }
        group.post("saved-games/uploads") { request, context -> SavedGameUpload in
            if request.headers[.contentType]?.hasPrefix("application/octet-stream") == true {
                return try await saves.start(
                    try Self.fields(of: request), data: try await Self.wholeSave(in: request), device: context.requireDevice(),
                    session: context.requireSession())
            }
            // The usual body limit, plus a small save's data as base64.
            var body = try await TurnBasedRoutes.decode(
                SavedGameUploadBody.self, from: request, carrying: SavedGameUploadBody.inlineBytes,
                tooLarge: APIError.saveInvalidRequest("a save carries at most \(SavedGameUploadBody.inlineBytes) bytes in its first request's JSON"),
                context: context)
            let data = body.data
            if let data, data.count > SavedGameUploadBody.inlineBytes {
                throw APIError.saveInvalidRequest(
                    "a save carries at most \(SavedGameUploadBody.inlineBytes) bytes as base64 in its first request; send \(data.count) bytes as the raw body (up to \(SavedGameUploadBody.wholeBytes)) or in chunks"
                )
            }
            body.data = nil
            return try await saves.start(body, data: data, device: context.requireDevice(), session: context.requireSession())
        }
        group.get("saved-games/uploads/{uploadID}") { _, context -> SavedGameUpload in
            try await saves.upload(id: context.parameters.require("uploadID"), device: context.requireDevice(), session: context.requireSession())
        }
        group.put("saved-games/uploads/{uploadID}/chunks/{index}") { request, context -> HTTPResponse.Status in
            let limit = SavedGameSettings.chunkBytes
            let bytes = try await request.body(upTo: limit, orThrow: APIError.saveInvalidRequest("a chunk has at most \(limit) bytes"))
            try await saves.putChunk(
                uploadID: context.parameters.require("uploadID"), index: try Self.index(context), data: Data(bytes.readableBytesView),
                device: context.requireDevice(), session: context.requireSession())
            return .noContent
        }
        group.post("saved-games/uploads/{uploadID}/finish") { _, context -> SavedGameVersions in
            try await saves.finish(uploadID: context.parameters.require("uploadID"), device: context.requireDevice(), session: context.requireSession())
        }
        group.get("saved-games/versions/{versionID}/chunks/{index}") { _, context -> Response in
            let data = try await saves.chunk(
                versionID: context.parameters.require("versionID"), index: try Self.index(context), device: context.requireDevice(),
                session: context.requireSession())
            return Self.bytes(data)
        }
    }

    /// For the studio's game servers (`saves:read`): a player's saves of the key's game and environment, and their data.
    func addServer(to group: RouterGroup<AppRequestContext>) {
        group.get("players/{playerID}/saved-games") { _, context -> SavedGameList in
            let caller = try context.requireServerCaller()
            try caller.require(.savesRead)
            return try await saves.list(playerID: context.parameters.requirePlayerID(), game: caller.game, environment: caller.environment)
        }
        group.get("players/{playerID}/saved-games/versions/{versionID}/chunks/{index}") { _, context -> Response in
            let caller = try context.requireServerCaller()
            try caller.require(.savesRead)
            let data = try await saves.chunk(
                versionID: context.parameters.require("versionID"), index: try Self.index(context), playerID: context.parameters.requirePlayerID(),
                game: caller.game, environment: caller.environment)
            return Self.bytes(data)
        }
    }

    /// The upload's fields from the ``SavedGameUploadBody/header`` of a request whose body is the save's bytes.
    private static func fields(of request: Request) throws -> SavedGameUploadBody {
        let header = SavedGameUploadBody.header
        guard let json = request.headers[HTTPField.Name(header)!] else {
            throw APIError.saveInvalidRequest("a save sent as the raw body names its fields in the \(header) header, as JSON")
        }
        let fields: SavedGameUploadBody
        do {
            fields = try WireCoding.makeDecoder().decode(SavedGameUploadBody.self, from: Data(json.utf8))
        } catch let error as DecodingError {
            throw APIError.saveInvalidRequest("the \(header) header is not the upload's fields as JSON: \(WireRequestDecoder.describe(error))")
        }
        guard fields.data == nil else { throw APIError.saveInvalidRequest("the \(header) header carries no data: the body is the data") }
        return fields
    }

    /// The whole save as a request's raw body, at most ``SavedGameUploadBody/wholeBytes``.
    private static func wholeSave(in request: Request) async throws -> Data {
        let limit = SavedGameUploadBody.wholeBytes
        let bytes = try await request.body(
            upTo: limit, orThrow: APIError.saveInvalidRequest("a save sent as the raw body has at most \(limit) bytes; upload a larger one in chunks"))
        return Data(bytes.readableBytesView)
    }

    private static func bytes(_ data: Data) -> Response {
        Response(status: .ok, headers: [.contentType: "application/octet-stream", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private static func index(_ context: AppRequestContext) throws -> Int {
        guard let index = Int(try context.parameters.require("index")), index >= 0 else {
            throw APIError.saveInvalidRequest("a chunk index is a whole number, 0 or more")
        }
        return index
    }
}

extension SavedGameList: ResponseEncodable {}
extension SavedGameUpload: ResponseEncodable {}
extension SavedGameVersions: ResponseEncodable {}
