import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterStorage
import NIOCore
import Synchronization

/// Asks the studio's verifier about a device's score: the game's webhook endpoint (in the score's environment) that
/// hears `score.verify`, posted to as a webhook is (signed with the endpoint's secret) with the score, its details and
/// its attachment. The verifier answers `{"decision": "accept"}` or `{"decision": "reject", "reason": "…"}` with a 2xx
/// status within the board's budget; anything else — no verifier, no answer in time, another status, another body —
/// quarantines the score, with the reason.
final class ScoreVerifier: Sendable {
    /// What the verifier decided.
    enum Verdict: Equatable {
        case accept
        case reject(reason: String)
        /// No decision: the score waits for the studio, for this reason.
        case quarantine(reason: String)
    }

    /// The longest reason kept.
    static let maximumReasonLength = 500

    private struct Cache {
        var endpoints: [WebhookEndpointRecord] = []
        var readAt: ContinuousClock.Instant?
    }
    private let cache = Mutex(Cache())

    /// Asks the verifier about `submission` (with its `attachment`), waiting at most `timeoutMillis`.
    func verify(_ submission: ScoreSubmissionRecord, attachment: Data?, timeoutMillis: Int64, database: Database) async -> Verdict {
        let endpoint: WebhookEndpointRecord?
        do {
            endpoint = try await verifiers(database).first { $0.bundleID == submission.bundleID && $0.environment == submission.environment }
        } catch {
            return .quarantine(reason: "the verifier could not be looked up: the database did not answer")
        }
        guard let endpoint else {
            return .quarantine(reason: "the game has no verifier: no webhook endpoint of the \(submission.environment) environment hears score.verify")
        }
        let body: String
        do {
            body = try Self.body(submission, attachment: attachment)
        } catch {
            return .quarantine(reason: "the score could not be written for the verifier: \(error)")
        }
        let request = WebhookDispatcher.request(
            to: endpoint, eventID: submission.submissionID, type: WebhookEventType.scoreVerify.rawValue, attempt: 1, body: body)
        let seconds = Double(timeoutMillis) / 1000
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .milliseconds(timeoutMillis))
            let answer = try await response.body.collect(upTo: 64 * 1024)
            guard (200..<300).contains(response.status.code) else {
                return .quarantine(reason: "the verifier answered HTTP \(response.status.code)")
            }
            guard let decision = try? JSONDecoder().decode(Decision.self, from: answer) else {
                return .quarantine(reason: #"the verifier's answer is not {"decision": "accept"} or {"decision": "reject", "reason": "…"}"#)
            }
            switch decision.decision {
            case "accept":
                return .accept
            case "reject":
                let reason = (decision.reason ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                return .reject(reason: reason.isEmpty ? "rejected by the verifier" : String(reason.prefix(Self.maximumReasonLength)))
            default:
                return .quarantine(reason: "the verifier's decision '\(decision.decision.prefix(40))' is neither accept nor reject")
            }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            return .quarantine(reason: "the verifier did not answer within \(seconds.formatted()) s")
        } catch {
            return .quarantine(reason: "the verifier could not be reached: \(String(describing: error).prefix(200))")
        }
    }

    /// The verifier endpoints of every game, read again when a second old.
    private func verifiers(_ database: Database) async throws -> [WebhookEndpointRecord] {
        if let (endpoints, readAt) = cache.withLock({ cache in cache.readAt.map { (cache.endpoints, $0) } }), ContinuousClock.now - readAt < .seconds(1) {
            return endpoints
        }
        let endpoints = try await database.read { try await $0.webhookEndpoints() }.filter { $0.events.contains(WebhookEventType.scoreVerify.rawValue) }
        cache.withLock { $0 = Cache(endpoints: endpoints, readAt: .now) }
        return endpoints
    }

    /// A verifier's answer.
    private struct Decision: Decodable {
        var decision: String
        var reason: String?
    }

    /// The question's body: an event of type `score.verify` whose data is the score.
    private static func body(_ submission: ScoreSubmissionRecord, attachment: Data?) throws -> String {
        let score = submission.score
        let event = WebhookEvent(
            id: submission.submissionID, type: WebhookEventType.scoreVerify.rawValue, createdAt: Double(submission.createdAt) / 1000,
            bundleID: submission.bundleID, environment: submission.environment,
            data: ScoreVerifyData(
                submissionID: submission.submissionID, playerID: submission.playerID, category: score.category, value: score.value,
                context: score.context, date: Double(score.earnedAt) / 1000, occurrence: score.occurrence.map { Double($0) / 1000 },
                details: submission.details, attachment: attachment?.base64EncodedString()))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(event), as: UTF8.self)
    }
}

/// `score.verify`'s data: the score a device reported, with what the game attached.
struct ScoreVerifyData: Encodable {
    var submissionID: String
    var playerID: String
    var category: String
    var value: Int64
    var context: UInt64
    /// When the score was earned, in seconds since 1970.
    var date: Double
    /// A recurring board's occurrence start, in seconds since 1970.
    var occurrence: Double?
    var details: [Int64]
    /// Base64; absent when the score has none.
    var attachment: String?
}
