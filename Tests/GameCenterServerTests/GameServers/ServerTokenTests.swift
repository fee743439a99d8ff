import Crypto
import Foundation
import Testing
@testable import GameCenterServer

/// The game-server token's checks, on tokens made here and then broken one way at a time (the live suite
/// `Tests/ServerAPI` checks the same against tokens PyJWT makes).
@Suite struct ServerTokenTests {
    let key = P256.Signing.PrivateKey()
    let now: Int64 = 1_800_000_000

    func make(issuedAt: Int64? = nil, lifetime: Int64 = 600) throws -> String {
        try ServerToken.make(keyID: "ABCDEFGHIJ", issuerID: "issuer-1", privateKey: key, issuedAt: issuedAt ?? now, lifetime: lifetime)
    }

    @Test func aTokenMadeWithTheKeyIsTakenForItsLifetime() throws {
        let token = try ServerToken(parsing: Substring(try make()))
        #expect(token.keyID == "ABCDEFGHIJ" && token.issuerID == "issuer-1" && token.expiresAt == now + 600)
        #expect(token.isSigned(by: key.publicKey))
        try token.check(at: now, method: "POST", path: "/v1/gameCenterLeaderboardEntrySubmissions")
        try token.check(at: now + 599, method: "POST", path: "/v1/x")
        #expect(throws: APIError.self) { try token.check(at: now + 600, method: "POST", path: "/v1/x") }
    }

    @Test func anotherKeysSignatureIsNotTheKeys() throws {
        let token = try ServerToken(parsing: Substring(try make()))
        #expect(!token.isSigned(by: P256.Signing.PrivateKey().publicKey))
    }

    @Test func aChangedClaimBreaksTheSignature() throws {
        let parts = try make().split(separator: ".")
        let claims = String(decoding: Data(base64URLEncoded: parts[1])!, as: UTF8.self).replacingOccurrences(of: "issuer-1", with: "issuer-2")
        let forged = "\(parts[0]).\(Data(claims.utf8).base64URLEncoded).\(parts[2])"
        let token = try ServerToken(parsing: Substring(forged))
        #expect(token.issuerID == "issuer-2")
        #expect(!token.isSigned(by: key.publicKey))
    }

    @Test func tokensLongerThanTwentyMinutesOrFromTheFutureAreRefused() throws {
        let long = try ServerToken(parsing: Substring(try make(lifetime: 1201)))
        #expect(throws: APIError.self) { try long.check(at: now, method: "GET", path: "/") }
        let early = try ServerToken(parsing: Substring(try make(issuedAt: now + 61)))
        #expect(throws: APIError.self) { try early.check(at: now, method: "GET", path: "/") }
        let slightlyEarly = try ServerToken(parsing: Substring(try make(issuedAt: now + 59)))
        try slightlyEarly.check(at: now, method: "GET", path: "/")
    }

    @Test func malformedTokensAreRefusedWithWhy() {
        let header = Data(#"{"alg":"ES256","kid":"K"}"#.utf8).base64URLEncoded
        let hs256 = Data(#"{"alg":"HS256","kid":"K"}"#.utf8).base64URLEncoded
        let claims = Data(#"{"iss":"i","exp":1,"aud":"appstoreconnect-v1"}"#.utf8).base64URLEncoded
        let otherAudience = Data(#"{"iss":"i","exp":1,"aud":"someone"}"#.utf8).base64URLEncoded
        let signature = Data(repeating: 1, count: 64).base64URLEncoded
        let cases: [(String, String)] = [
            ("hello", "three base64url parts"),
            ("a.b.c", "header"),
            ("\(hs256).\(claims).\(signature)", "only ES256"),
            ("\(header).e30.\(signature)", "claims"),
            ("\(header).\(claims).AAAA", "signature"),
            ("\(header).\(otherAudience).\(signature)", "audience"),
            (String(repeating: "a", count: 5000), "longer than"),
        ]
        for (token, why) in cases {
            do {
                _ = try ServerToken(parsing: Substring(token))
                Issue.record("'\(token.prefix(30))' was taken")
            } catch {
                #expect(error.code == .keyInvalid && error.message.contains(why), "\(error.message)")
            }
        }
    }

    @Test func aScopedTokenMakesOnlyTheRequestsItNames() throws {
        let header = Data(#"{"alg":"ES256","kid":"K","typ":"JWT"}"#.utf8).base64URLEncoded
        let claims = Data(
            #"{"iss":"i","iat":\#(now),"exp":\#(now + 60),"aud":"appstoreconnect-v1","scope":["GET /server/v1/players/G:1?x=1"]}"#.utf8
        ).base64URLEncoded
        let input = "\(header).\(claims)"
        let token = try ServerToken(parsing: Substring("\(input).\(try key.signature(for: Data(input.utf8)).rawRepresentation.base64URLEncoded)"))
        #expect(token.isSigned(by: key.publicKey))
        try token.check(at: now, method: "GET", path: "/server/v1/players/G:1")
        #expect(throws: APIError.self) { try token.check(at: now, method: "GET", path: "/server/v1/players/G:2") }
        #expect(throws: APIError.self) { try token.check(at: now, method: "POST", path: "/server/v1/players/G:1") }
    }
}
