import Crypto
import Foundation
import GameCenterProtocol
import HTTPTypes
import Hummingbird
import NIOCore

/// HTTP for achievements: descriptions and images, progress, reports, reset, and a friend's achievements.
struct AchievementRoutes {
    let achievements: AchievementService

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.get("achievement-descriptions") { _, context -> AchievementDescriptionList in
            AchievementDescriptionList(descriptions: try await achievements.descriptions(device: context.requireDevice(), session: context.requireSession()))
        }
        group.get("achievement-descriptions/{identifier}/image") { request, context -> Response in
            let image = try await achievements.image(
                identifier: context.parameters.require("identifier"),
                device: context.requireDevice(), session: context.requireSession())
            let etag = "\"" + Credentials.hex(SHA256.hash(data: image).prefix(12)) + "\""
            var headers: HTTPFields = [.cacheControl: "private, max-age=86400", .eTag: etag]
            if request.headers[.ifNoneMatch] == etag { return Response(status: .notModified, headers: headers) }
            headers[.contentType] = "image/png"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: image)))
        }
        group.get("achievements") { _, context -> AchievementList in
            try await achievements.progress(device: context.requireDevice(), playerID: context.requireSession().playerID)
        }
        group.post("achievements") { request, context -> AchievementReportResult in
            let batch = try await request.decode(as: AchievementReportBatch.self, context: context)
            return try await achievements.report(batch, device: context.requireDevice(), session: context.requireSession())
        }
        group.delete("achievements") { _, context -> HTTPResponse.Status in
            try await achievements.reset(device: context.requireDevice(), session: context.requireSession())
            return .noContent
        }
        group.get("players/{playerID}/achievements") { _, context -> AchievementList in
            try await achievements.friendAchievements(
                of: context.parameters.require("playerID"),
                device: context.requireDevice(), session: context.requireSession())
        }
    }
}

extension AchievementDescriptionList: ResponseEncodable {}
extension AchievementList: ResponseEncodable {}
extension AchievementReportResult: ResponseEncodable {}
