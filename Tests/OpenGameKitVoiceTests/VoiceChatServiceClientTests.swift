import Foundation
import Logging
import Synchronization
import Testing
@testable import OpenGameKit
@testable import OpenGameKitVoice

/// The service holds its client weakly, as GameKit's does: a client the game forgot to keep is reported — logged once
/// and named in the error of the next call — not silently gone.
@Suite struct VoiceChatServiceClientTests {
    /// A client that sends nowhere.
    final class ForgottenClient: GKVoiceChatClient {
        func participantID() -> String { "forgotten" }
        func voiceChatService(_ service: GKVoiceChatService, send data: Data, toParticipantID participantID: String) {}
    }

    /// Error lines logged, kept for the test.
    final class ErrorLines: LogHandler, @unchecked Sendable {
        // `@unchecked Sendable`: `lines` is behind a Mutex; the metadata and level are the logger's own copy.
        let lines = Mutex<[String]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            if event.level >= .error { lines.withLock { $0.append(event.message.description) } }
        }
    }

    /// A client made here and held by nothing but the service.
    static func setUnkeptClient(on service: GKVoiceChatService) {
        let client = ForgottenClient()
        service.client = client
    }

    @Test func aClientTheGameDidNotKeepIsLoggedOnceAndNamedInTheError() throws {
        let errors = ErrorLines()
        let service = GKVoiceChatService(logger: Logger(label: "test") { _ in errors })

        // Never set: the error says to set one, and nothing is logged.
        let unset = #expect(throws: GKError.self) { try service.startVoiceChat(withParticipantID: "other") }
        #expect(unset?.code == .invalidParameter && unset?.message.contains("set `client`") == true)
        #expect(errors.lines.withLock { $0 }.isEmpty)

        // Set and released: the error names the client's type and says why it is gone.
        Self.setUnkeptClient(on: service)
        #expect(service.client == nil)
        let released = #expect(throws: GKError.self) { try service.startVoiceChat(withParticipantID: "other") }
        #expect(released?.code == .invalidParameter)
        #expect(released?.message.contains("ForgottenClient") == true && released?.message.contains("released") == true)
        // Signalling that arrives meanwhile finds no client either; the release is logged once.
        service.receivedData(Data([1, 2, 3]), fromParticipantID: "other")
        let logged = errors.lines.withLock { $0 }
        #expect(logged.count == 1 && logged.first?.contains("ForgottenClient") == true)

        // A client the game keeps, then sets to nil on purpose: nothing more to report.
        let kept = ForgottenClient()
        service.client = kept
        #expect(service.client === kept)
        service.client = nil
        let cleared = #expect(throws: GKError.self) { try service.startVoiceChat(withParticipantID: "other") }
        #expect(cleared?.message.contains("set `client`") == true)
        #expect(errors.lines.withLock { $0 }.count == 1)
    }
}
