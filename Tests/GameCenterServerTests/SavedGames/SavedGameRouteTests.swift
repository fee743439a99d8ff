import Foundation
import GameCenterProtocol
import HTTPTypes
import Testing

@testable import GameCenterServer

/// The saved-game routes' edges: an upload resumed chunk by chunk and finished only whole and intact, a checksum that
/// does not match saving nothing, the game's limits refused with their numbers, strangers kept out.
@Suite struct SavedGameRouteTests {
    static func sha256(_ data: Data) -> String { SavedGameDigest.sha256(data) }

    static func start(
        _ client: TestServer.Client, _ token: String, name: String, data: Data, basedOn: [String] = [], sha: String? = nil,
        bundleID: String = "com.example.open"
    ) async throws -> TestServer.Client.Answer {
        try await client.send(
            .post, "/v1/saved-games/uploads",
            SavedGameUploadBody(name: name, basedOn: basedOn, deviceName: "test", size: Int64(data.count), sha256: sha ?? sha256(data)), token: token,
            bundleID: bundleID)
    }

    /// Saves `data` whole; returns the save's current versions.
    static func save(_ client: TestServer.Client, _ token: String, name: String, data: Data, bundleID: String) async throws -> SavedGameVersions {
        let upload = try await start(client, token, name: name, data: data, bundleID: bundleID).decode(SavedGameUpload.self)
        for index in 0..<upload.chunks {
            let chunk = data.subdata(in: index * upload.chunkBytes..<min((index + 1) * upload.chunkBytes, data.count))
            let put = try await client.call(.put, "/v1/saved-games/uploads/\(upload.uploadID)/chunks/\(index)", bytes: chunk, token: token, bundleID: bundleID)
            #expect(put.status == .noContent)
        }
        return try await client.call(.post, "/v1/saved-games/uploads/\(upload.uploadID)/finish", token: token, bundleID: bundleID).decode(
            SavedGameVersions.self)
    }

    @Test func anUploadIsResumedChunkByChunkAndFinishedOnlyWhenWholeAndIntact() async throws {
        try await TestServer.run { client in
            let sam = try await client.signUp()
            let stranger = try await client.signUp()
            let data = Data((0..<(5 << 19)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })  // 2.5 MiB: chunks of 1, 1 and 0.5 MiB
            let upload = try await Self.start(client, sam.token, name: "slot", data: data).decode(SavedGameUpload.self)
            #expect(upload.chunks == 3 && upload.chunkBytes == 1 << 20 && upload.receivedChunks.isEmpty)
            let path = "/v1/saved-games/uploads/\(upload.uploadID)"
            let chunk = { (index: Int) in data.subdata(in: index << 20..<min((index + 1) << 20, data.count)) }

            #expect(try await client.call(.put, "\(path)/chunks/1", bytes: chunk(1), token: sam.token).status == .noContent)
            #expect(try await client.call(.get, path, token: sam.token).decode(SavedGameUpload.self).receivedChunks == [1])
            let early = try await client.call(.post, "\(path)/finish", token: sam.token)
            expectError(early, .conflict, "save.upload_incomplete", .invalidParameter)
            #expect(early.error?.message.contains("0, 2") == true)
            expectError(
                try await client.call(.put, "\(path)/chunks/0", bytes: chunk(2), token: sam.token), .badRequest, "save.invalid_request",
                .invalidParameter)
            expectError(
                try await client.call(.put, "\(path)/chunks/3", bytes: chunk(2), token: sam.token), .badRequest, "save.invalid_request",
                .invalidParameter)
            // Another player cannot add to it or see it.
            expectError(
                try await client.call(.put, "\(path)/chunks/0", bytes: chunk(0), token: stranger.token), .notFound, "save.no_such_upload",
                .invalidParameter)
            // Sent again after a dropped connection: the same chunk replaces itself.
            for index in [0, 2, 2] {
                #expect(try await client.call(.put, "\(path)/chunks/\(index)", bytes: chunk(index), token: sam.token).status == .noContent)
            }
            let finished = try await client.call(.post, "\(path)/finish", token: sam.token).decode(SavedGameVersions.self)
            #expect(finished.versions.map(\.versionID) == [upload.uploadID] && finished.versions[0].size == Int64(data.count))

            let list = try await client.call(.get, "/v1/saved-games", token: sam.token).decode(SavedGameList.self)
            #expect(list.saves.map(\.versionID) == [upload.uploadID] && list.limits.saveBytes == 32 << 20 && list.limits.totalBytes == 256 << 20)
            var downloaded = Data()
            for index in 0..<3 {
                downloaded += try await client.call(.get, "/v1/saved-games/versions/\(upload.uploadID)/chunks/\(index)", token: sam.token).body
            }
            #expect(downloaded == data)
            expectError(try await client.call(.get, path, token: sam.token), .notFound, "save.no_such_upload", .invalidParameter)
            expectError(
                try await client.call(.get, "/v1/saved-games/versions/\(upload.uploadID)/chunks/0", token: stranger.token), .notFound,
                "save.no_such_save", .invalidParameter)
            #expect(try await client.call(.get, "/v1/saved-games", token: stranger.token).decode(SavedGameList.self).saves.isEmpty)
        }
    }

    @Test func aSmallSaveCarriesItsDataAndIsSavedInOneRequest() async throws {
        try await TestServer.run { client in
            let sam = try await client.signUp()
            let data = Data((0..<(200 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
            let body = SavedGameUploadBody(name: "slot", basedOn: [], deviceName: "test", size: Int64(data.count), sha256: Self.sha256(data), data: data)
            let upload = try await client.send(.post, "/v1/saved-games/uploads", body, token: sam.token).decode(SavedGameUpload.self)
            let saved = try #require(upload.saved)
            #expect(saved.versions.map(\.versionID) == [upload.uploadID] && upload.receivedChunks == [0])
            #expect(try await client.call(.get, "/v1/saved-games/versions/\(upload.uploadID)/chunks/0", token: sam.token).body == data)
            expectError(
                try await client.call(.get, "/v1/saved-games/uploads/\(upload.uploadID)", token: sam.token), .notFound, "save.no_such_upload",
                .invalidParameter)
            // The data must be what was announced, and small.
            var wrong = body
            wrong.sha256 = Self.sha256(Data("other".utf8))
            expectError(
                try await client.send(.post, "/v1/saved-games/uploads", wrong, token: sam.token), .unprocessableContent, "save.checksum_mismatch",
                .invalidParameter)
            wrong = body
            wrong.size += 1
            expectError(
                try await client.send(.post, "/v1/saved-games/uploads", wrong, token: sam.token), .badRequest, "save.invalid_request", .invalidParameter)
            let large = Data(count: SavedGameUploadBody.inlineBytes + 1)
            let tooLarge = SavedGameUploadBody(name: "big", basedOn: [], deviceName: "test", size: Int64(large.count), sha256: Self.sha256(large), data: large)
            expectError(
                try await client.send(.post, "/v1/saved-games/uploads", tooLarge, token: sam.token), .badRequest, "save.invalid_request", .invalidParameter)
            #expect(try await client.call(.get, "/v1/saved-games", token: sam.token).decode(SavedGameList.self).saves.map(\.versionID) == [upload.uploadID])
        }
    }

    @Test func aSaveOfUpToOneMiBGoesWholeAsTheRawBodyOfOneRequest() async throws {
        try await TestServer.run { client in
            let sam = try await client.signUp()
            let data = Data((0..<SavedGameUploadBody.wholeBytes).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) })
            let header = HTTPField.Name(SavedGameUploadBody.header)!
            // The fields as JSON, the name's characters beyond ASCII escaped as JSON escapes them.
            let fields = { (data: Data, sha: String) in
                #"{"name":"\u00e9t\u00e9 \ud83c\udfae","basedOn":[],"deviceName":"test","size":\#(data.count),"sha256":"\#(sha)"}"#
            }
            let whole = { (data: Data, fields: String?) in
                try await client.call(
                    .post, "/v1/saved-games/uploads", bytes: data, token: sam.token, extraHeaders: fields.map { [header: $0] } ?? [:])
            }
            let upload = try await whole(data, fields(data, Self.sha256(data))).decode(SavedGameUpload.self)
            let saved = try #require(upload.saved)
            #expect(saved.name == "été 🎮" && saved.versions.map(\.versionID) == [upload.uploadID] && upload.receivedChunks == [0])
            #expect(try await client.call(.get, "/v1/saved-games/versions/\(upload.uploadID)/chunks/0", token: sam.token).body == data)

            // One byte more goes in chunks; the fields come in the header, without data, and must match the bytes.
            let larger = data + Data([1])
            let over = try await whole(larger, fields(larger, Self.sha256(larger)))
            expectError(over, .badRequest, "save.invalid_request", .invalidParameter)
            #expect(over.error?.message.contains("\(SavedGameUploadBody.wholeBytes)") == true)
            expectError(try await whole(data, nil), .badRequest, "save.invalid_request", .invalidParameter)
            expectError(try await whole(data, "name=slot"), .badRequest, "save.invalid_request", .invalidParameter)
            let withData = #"{"name":"slot","basedOn":[],"deviceName":"test","size":1,"sha256":"\#(Self.sha256(Data([1])))","data":"AQ=="}"#
            expectError(try await whole(Data([1]), withData), .badRequest, "save.invalid_request", .invalidParameter)
            expectError(
                try await whole(data, fields(data, Self.sha256(Data("other".utf8)))), .unprocessableContent, "save.checksum_mismatch", .invalidParameter)
            #expect(try await client.call(.get, "/v1/saved-games", token: sam.token).decode(SavedGameList.self).saves.map(\.versionID) == [upload.uploadID])
        }
    }

    @Test func aSaveKeepsItsTenNewestVersionsAndEveryCurrentOneWithTheirBytes() async throws {
        try await TestServer.run { client in
            let sam = try await client.signUp()
            let playerID = sam.player.playerID
            let post = { (data: Data, basedOn: [String]) in
                let body = SavedGameUploadBody(
                    name: "slot", basedOn: basedOn, deviceName: "test", size: Int64(data.count), sha256: Self.sha256(data), data: data)
                return try #require(try await client.send(.post, "/v1/saved-games/uploads", body, token: sam.token).decode(SavedGameUpload.self).saved)
            }
            // A version of another device, based on nothing, stays current (a conflict) while this device saves 13 times.
            let other = try await post(Data("other device".utf8), []).versions[0].versionID
            var made: [String] = []
            for index in 0..<13 {
                let current = try await post(Data("save \(index)".utf8), made.suffix(1))
                made.append(try #require(current.versions.first { $0.versionID != other }).versionID)
                #expect(Set(current.versions.map(\.versionID)) == [other, made.last!])
            }
            // Kept: the ten newest, and the current one older than them; the three oldest of this device are gone, bytes too.
            let kept = try await client.services.saves.overview(playerID: playerID, environment: "sandbox")
            #expect(Set(kept.map(\.versionID)) == Set(made.suffix(10) + [other]))
            #expect(Set(kept.filter(\.current).map(\.versionID)) == [other, made.last!])
            for gone in made.prefix(3) {
                expectError(
                    try await client.call(.get, "/v1/saved-games/versions/\(gone)/chunks/0", token: sam.token), .notFound, "save.no_such_save",
                    .invalidParameter)
                #expect(try await client.services.database.read { try await $0.savedGameChunk(owner: gone, index: 0) } == nil)
            }
            #expect(try await client.call(.get, "/v1/saved-games/versions/\(made[3])/chunks/0", token: sam.token).body == Data("save 3".utf8))
            #expect(try await client.call(.get, "/v1/saved-games/versions/\(other)/chunks/0", token: sam.token).body == Data("other device".utf8))
        }
    }

    @Test func bytesWhoseChecksumDiffersSaveNothing() async throws {
        try await TestServer.run { client in
            let sam = try await client.signUp()
            let data = Data("the real bytes".utf8)
            let upload = try await Self.start(client, sam.token, name: "slot", data: data, sha: Self.sha256(Data("other bytes".utf8)))
                .decode(SavedGameUpload.self)
            let path = "/v1/saved-games/uploads/\(upload.uploadID)"
            #expect(try await client.call(.put, "\(path)/chunks/0", bytes: data, token: sam.token).status == .noContent)
            expectError(try await client.call(.post, "\(path)/finish", token: sam.token), .unprocessableContent, "save.checksum_mismatch", .invalidParameter)
            #expect(try await client.call(.get, "/v1/saved-games", token: sam.token).decode(SavedGameList.self).saves.isEmpty)
            expectError(try await client.call(.get, path, token: sam.token), .notFound, "save.no_such_upload", .invalidParameter)
        }
    }

    @Test func theGamesLimitsAreRefusedBeforeAnyUploadWithTheirNumbers() async throws {
        try await TestServer.run { client in
            let game = "com.example.saves"
            let sam = try await client.send(
                .post, "/v1/accounts", SignUpRequest(account: "sam-\(UUID().uuidString.prefix(8).lowercased())", password: "password-1", alias: "Sam"),
                bundleID: game
            ).decode(SessionResponse.self)
            let tooLarge = try await Self.start(client, sam.token, name: "a", data: Data(count: 4097), bundleID: game)
            expectError(tooLarge, .contentTooLarge, "save.too_large", .invalidParameter)
            #expect(tooLarge.error?.message.contains("4096") == true && tooLarge.error?.message.contains("4097") == true)
            expectError(
                try await Self.start(client, sam.token, name: "ninechars", data: Data(count: 1), bundleID: game), .badRequest, "save.invalid_request",
                .invalidParameter)

            let a = try await Self.save(client, sam.token, name: "a", data: Data(count: 3000), bundleID: game)
            let overQuota = try await Self.start(client, sam.token, name: "b", data: Data(count: 2001), bundleID: game)
            expectError(overQuota, .conflict, "save.quota_exceeded", .invalidParameter)
            #expect(["3000", "2001", "5001", "5000"].allSatisfy { overQuota.error?.message.contains($0) == true })
            // Replacing a (based on it) counts a's new size instead of both.
            #expect(
                try await Self.start(client, sam.token, name: "a", data: Data(count: 4096), basedOn: [a.versions[0].versionID], bundleID: game).status == .ok)
            _ = try await Self.save(client, sam.token, name: "b", data: Data(count: 1000), bundleID: game)
            let third = try await Self.start(client, sam.token, name: "c", data: Data(count: 1), bundleID: game)
            expectError(third, .conflict, "save.too_many", .invalidParameter)
            #expect(third.error?.message.contains("2") == true)
            let list = try await client.call(.get, "/v1/saved-games", token: sam.token, bundleID: game).decode(SavedGameList.self)
            #expect(list.saves.map(\.name) == ["a", "b"])
            #expect(list.limits == SavedGameLimits(saveBytes: 4096, totalBytes: 5000, saves: 2, nameLength: 8, chunkBytes: 1 << 20))
        }
    }
}
