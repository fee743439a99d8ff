import Crypto
import Foundation
import GameCenterStorage
import HTTPTypes
import Hummingbird
import Synchronization

/// Game-server writes made once in effect, whatever the retries: a write sent with an `Idempotency-Key` header is
/// answered the first time, and every retry with the same key (in the same game and environment, within a day) gets
/// that same answer without writing again; the same key on a different request is refused
/// (`key.idempotency_key_reused`).
///
/// The stored answer is written after the write it answers. A retry that comes after a write but before its answer was
/// kept (the node stopped between them) writes again under the same report id, derived from the key: the storage
/// applies a report id once, so that write changes nothing, and its answer is kept then.
final class IdempotentWrites: Sendable {
    let database: Database
    let clock: ServerClock
    /// When answers older than a day were last forgotten.
    private let lastPurge = Mutex<ContinuousClock.Instant?>(nil)

    /// How long an answer is kept.
    static let keepMillis: Int64 = 24 * 3600 * 1000
    /// The header's name.
    static let header = HTTPField.Name("Idempotency-Key")!

    init(database: Database, clock: ServerClock) {
        self.database = database
        self.clock = clock
    }

    /// Answers `request` (whose body is `body`) for `caller`: the kept answer of an earlier request with its
    /// `Idempotency-Key`, or `write`'s, which is kept. `write` gets the report id to store its write under (the same for
    /// every retry of a key; a new one for a request without a key) and answers a status and a JSON body.
    func answer(
        _ request: Request, body: ByteBuffer, caller: ServerCaller, write: (String) async throws -> (status: HTTPResponse.Status, json: Data)
    ) async throws -> Response {
        guard let key = try Self.idempotencyKey(request.headers) else {
            let (status, json) = try await write("srv-" + UUID().uuidString)
            return Self.response(status: status, json: json, replayed: false)
        }
        let bundleID = caller.game.bundleID
        let environment = caller.environment.rawValue
        var hasher = SHA256()
        hasher.update(data: Data("\(request.method.rawValue) \(request.uri.path)\n".utf8))
        hasher.update(data: Data(buffer: body, byteTransferStrategy: .noCopy))
        let requestHash = Credentials.hex(hasher.finalize())
        if let kept = try await database.read({ try await $0.idempotentAnswer(bundleID: bundleID, environment: environment, key: key) }) {
            guard kept.requestHash == requestHash else { throw APIError.idempotencyKeyReused }
            return Self.response(status: HTTPResponse.Status(code: kept.status), json: Data(kept.body.utf8), replayed: true)
        }
        let reportID = "srv-" + Credentials.hex(SHA256.hash(data: Data("\(bundleID)\n\(environment)\n\(key)".utf8)).prefix(28))
        let (status, json) = try await write(reportID)
        let now = clock.nowMillis()
        let purge = lastPurge.withLock { last in
            let due = last.map { ContinuousClock.now - $0 > .seconds(60) } ?? true
            if due { last = .now }
            return due
        }
        try await database.write { storage in
            try await storage.keepIdempotentAnswer(
                IdempotentAnswer(requestHash: requestHash, status: Int(status.code), body: String(decoding: json, as: UTF8.self)),
                bundleID: bundleID, environment: environment, key: key, now: now)
            if purge { try await storage.forgetIdempotentAnswers(before: now - Self.keepMillis) }
        }
        return Self.response(status: status, json: json, replayed: false)
    }

    /// The request's idempotency key: 1 to 255 printable ASCII characters; nil when it sent none.
    private static func idempotencyKey(_ headers: HTTPFields) throws(APIError) -> String? {
        guard let key = headers[header] else { return nil }
        guard (1...255).contains(key.unicodeScalars.count), key.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }) else {
            throw APIError.invalidParameter("Idempotency-Key is 1 to 255 printable ASCII characters (a UUID is fine)")
        }
        return key
    }

    private static func response(status: HTTPResponse.Status, json: Data, replayed: Bool) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if replayed { headers[HTTPField.Name("Idempotent-Replayed")!] = "true" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}

extension APIError {
    /// An idempotency key sent before with another request.
    static let idempotencyKeyReused = APIError(
        .keyIdempotencyKeyReused,
        "this Idempotency-Key was used in the last day for a different request in this game and environment; use a new key for a new write")
}
