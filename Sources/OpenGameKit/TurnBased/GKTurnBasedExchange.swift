import Foundation
import GameCenterProtocol

/// Data a participant sent others outside the turn order, and their replies.
public final class GKTurnBasedExchange: Sendable {
    /// GameKit's exchange states.
    public enum Status: Int, Sendable {
        case unknown = 0, active, complete, resolved, canceled
    }

    /// The exchange's id in its match.
    public let exchangeID: String
    /// Who sent it.
    public let sender: GKTurnBasedParticipant?
    /// Who it was sent to.
    public let recipients: [GKTurnBasedParticipant]
    /// What it carries.
    public let data: Data
    /// Its message.
    public let message: String?
    /// When it was sent.
    public let sendDate: Date
    /// When it completes with the replies it has, if not every recipient replied before.
    public let timeoutDate: Date?
    /// When it completed or was canceled.
    public let completionDate: Date?
    /// Active, complete (waiting to be merged), or canceled.
    public let status: Status
    /// The recipients' replies so far.
    public let replies: [GKTurnBasedExchangeReply]?
    private let match: GKTurnBasedMatch

    init(info: TurnBasedExchangeInfo, match: GKTurnBasedMatch) {
        let participants = match.participants
        let seat = { (index: Int) in participants.indices.contains(index) ? participants[index] : nil }
        exchangeID = info.exchangeID
        sender = seat(info.senderIndex)
        recipients = info.recipientIndexes.compactMap(seat)
        data = info.data
        message = info.message
        sendDate = info.sendDate
        timeoutDate = info.timeoutDate
        completionDate = info.completionDate
        status = Status(rawValue: info.status) ?? .unknown
        let replies = info.replies.map { GKTurnBasedExchangeReply(info: $0, recipient: seat($0.recipientIndex)) }
        self.replies = replies.isEmpty ? nil : replies
        self.match = match
    }

    /// Replies to the exchange (the local player must be a recipient who has not replied).
    public func reply(withLocalizableMessageKey key: String, arguments: [String], data: Data) async throws {
        try await match.answer(exchangeID, TurnBasedExchangeAnswerBody(action: .reply, data: data, message: GKTurnBasedMatch.localized(key, arguments)))
    }

    /// ``reply(withLocalizableMessageKey:arguments:data:)`` with a completion handler.
    public func reply(
        withLocalizableMessageKey key: String, arguments: [String], data: Data, completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await self.reply(withLocalizableMessageKey: key, arguments: arguments, data: data) }
    }

    /// Cancels the exchange (its sender only, while it is active).
    public func cancel(withLocalizableMessageKey key: String, arguments: [String]) async throws {
        try await match.answer(exchangeID, TurnBasedExchangeAnswerBody(action: .cancel, message: GKTurnBasedMatch.localized(key, arguments)))
    }

    /// ``cancel(withLocalizableMessageKey:arguments:)`` with a completion handler.
    public func cancel(withLocalizableMessageKey key: String, arguments: [String], completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.cancel(withLocalizableMessageKey: key, arguments: arguments) }
    }
}

/// A recipient's reply to an exchange.
public final class GKTurnBasedExchangeReply: Sendable {
    /// Who replied.
    public let recipient: GKTurnBasedParticipant?
    /// The reply's message.
    public let message: String?
    /// What the reply carries.
    public let data: Data?
    /// When it was sent.
    public let replyDate: Date

    init(info: TurnBasedExchangeReplyInfo, recipient: GKTurnBasedParticipant?) {
        self.recipient = recipient
        message = info.message
        data = info.data
        replyDate = info.replyDate
    }
}
