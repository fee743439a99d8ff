import Foundation

extension GKScore {
    /// Reports this score and calls `completionHandler` once with nil or the error, as the seed's
    /// `reportScoreWithCompletionHandler:` does (a queued report's error has `queued == true`).
    public func report(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.report() }
    }

    /// Reports several scores of one device in one request and calls `completionHandler` once with nil or the error.
    public static func report(_ scores: [GKScore], completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await report(scores) }
    }
}
