import Foundation
import GameCenterProtocol
import Testing

@Suite struct WireFormatTests {
    static let frames: [ServerFrame] = [
        .hello(heartbeatSeconds: 0.5, cursor: 42),
        .event(RealtimeEvent(seq: 7, kind: .friendRequestReceived, payload: #"{"a":1}"#, createdAt: Date(timeIntervalSince1970: 1_700_000_000.5))),
        .heartbeat,
        .sessionEnded(reason: "revoked"),
    ]

    @Test(arguments: frames)
    func serverFramesRoundTrip(_ frame: ServerFrame) throws {
        let data = try WireCoding.makeEncoder().encode(frame)
        #expect(try WireCoding.makeDecoder().decode(ServerFrame.self, from: data) == frame)
    }

    @Test func errorBodiesCarryTheNumericCode() throws {
        let body = ErrorBody(code: "account.invalid_credentials", gkCode: .invalidCredentials, message: "wrong")
        let json = try #require(try JSONSerialization.jsonObject(with: WireCoding.makeEncoder().encode(body)) as? [String: Any])
        #expect(json["gkCode"] as? Int == 5)
        #expect(json["code"] as? String == "account.invalid_credentials")
    }

    @Test func datesAreSecondsSince1970() throws {
        let info = FriendRequestInfo(requestID: "r", from: "G:a", fromAlias: "A", message: nil, createdAt: Date(timeIntervalSince1970: 12.5))
        let json = try #require(try JSONSerialization.jsonObject(with: WireCoding.makeEncoder().encode(info)) as? [String: Any])
        #expect(json["createdAt"] as? Double == 12.5)
    }

    @Test func theSeedsLimitsHold() {
        #expect(Limits.maximumReliableMessageBytes == 89_088)
        #expect(Limits.maximumLeaderboardsPerGame == 25)
        #expect(Limits.maximumAchievementPointsPerGame == 1000)
        #expect(Limits.achievementPointsRange == 1...100)
    }
}
