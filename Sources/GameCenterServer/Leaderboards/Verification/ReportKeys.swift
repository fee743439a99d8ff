import Crypto
import Foundation
import GameCenterProtocol
import GameCenterStorage
import NIOCore
import Synchronization

/// The keys sessions sign score reports with, for boards whose `writePolicy` is `signed`: a random key per session,
/// handed to the device (`POST /v1/report-keys`) and kept in storage with the last counter it signed. A signed report
/// carries a counter above that one and the HMAC-SHA256 of `COUNTER.BODY`: a report made by hand (no key), altered
/// (another body) or replayed (a counter taken) is refused. Counters are taken in storage, one statement for the
/// sessions waiting at the same moment, so every node agrees.
final class ReportKeys: Sendable {
    /// Keys read on this node, by session (a key never changes; a new one replaces it, and a mismatch reads again).
    private let cache = Mutex([String: SymmetricKey]())
    /// Sessions whose key this node keeps at most; past it, the cache starts again.
    static let cacheLimit = 100_000

    /// A new key for the session (replacing its old one and restarting its counter).
    func issue(for session: AuthenticatedSession, database: Database, now: Int64) async throws -> ReportKey {
        let secret = Data((0..<32).map { _ in UInt8.random(in: .min ... .max) }).base64EncodedString()
        try await database.write { try await $0.setReportKey(sessionID: session.sessionID, secret: secret, now: now) }
        remember(SymmetricKey(data: Data(base64Encoded: secret)!), for: session.sessionID)
        return ReportKey(key: secret, counter: 0)
    }

    /// Checks a report's signature headers against `body`; answers its counter (which the caller takes with the report,
    /// or ``take(_:session:database:)``), or throws the error that says what is missing or wrong.
    func verify(body: ByteBuffer, counter counterText: String?, signature: String?, session: AuthenticatedSession, database: Database) async throws
        -> Int64
    {
        guard let counterText, let signature else {
            throw APIError(
                .leaderboardSignatureRequired,
                "this leaderboard takes signed reports only (writePolicy signed): send \(ReportSignature.counterHeader) and \(ReportSignature.signatureHeader) with a key from POST /v1/report-keys"
            )
        }
        guard let counter = Int64(counterText), counter >= 1 else {
            throw APIError(.leaderboardSignatureInvalid, "\(ReportSignature.counterHeader) is a whole number from 1; got '\(counterText.prefix(24))'")
        }
        var key = cache.withLock { $0[session.sessionID] }
        let fromCache = key != nil
        if key == nil { key = try await read(session.sessionID, database) }
        guard var key else {
            throw APIError(.leaderboardSignatureRequired, "this session has no report key: get one with POST /v1/report-keys and sign the report with it")
        }
        if !Self.matches(signature, key: key, counter: counterText, body: body) {
            // Another node may have given the session a new key since this one read it.
            guard fromCache, let fresh = try await read(session.sessionID, database), Self.matches(signature, key: fresh, counter: counterText, body: body)
            else {
                throw APIError(
                    .leaderboardSignatureInvalid,
                    "\(ReportSignature.signatureHeader) is not v1= and the HMAC-SHA256 of COUNTER.BODY with this session's report key")
            }
            key = fresh
        }
        return counter
    }

    /// Takes a signed report's counter on its own (for reports not stored in one write with it).
    func take(_ counter: Int64, session: AuthenticatedSession, database: Database) async throws {
        guard try await database.advanceReportCounter(sessionID: session.sessionID, to: counter) else { throw Self.counterTaken(counter) }
    }

    /// The error of a counter that was not above the key's last.
    static func counterTaken(_ counter: Int64) -> APIError {
        APIError(
            .leaderboardCounterUsed,
            "counter \(counter) is not above the last one this session's report key signed (a replayed report, or reports signed out of order): sign it again with a higher counter"
        )
    }

    private func read(_ sessionID: String, _ database: Database) async throws -> SymmetricKey? {
        guard let secret = try await database.read({ try await $0.reportKeySecret(sessionID: sessionID) }), let bytes = Data(base64Encoded: secret)
        else { return nil }
        let key = SymmetricKey(data: bytes)
        remember(key, for: sessionID)
        return key
    }

    private func remember(_ key: SymmetricKey, for sessionID: String) {
        cache.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll() }
            cache[sessionID] = key
        }
    }

    /// Whether `signature` is `v1=` and the lowercase hex HMAC-SHA256 with `key` of `counter.body`.
    static func matches(_ signature: String, key: SymmetricKey, counter: String, body: ByteBuffer) -> Bool {
        guard signature.hasPrefix("v1="), let given = Data(hex: signature.dropFirst(3)), given.count == SHA256.byteCount else { return false }
        var mac = HMAC<SHA256>(key: key)
        mac.update(data: Data("\(counter).".utf8))
        mac.update(data: body.readableBytesView)
        // Compared in constant time (swift-crypto's == between a code and bytes).
        return mac.finalize() == given
    }
}

extension Data {
    /// Bytes from lowercase or uppercase hex; nil when `hex` is not an even number of hex digits.
    init?(hex: some StringProtocol) {
        guard hex.utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8?
        for character in hex.utf8 {
            guard let value = character.hexValue else { return nil }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        self.init(bytes)
    }
}

extension UInt8 {
    /// The value of an ASCII hex digit.
    fileprivate var hexValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
