import Crypto
import Testing
@testable import OpenGameKitVoice

/// The two-party call's wire: signalling messages and sealed media datagrams.
@Suite struct VoiceCallWireTests {
    static let token = (0..<16).map { UInt8($0) }

    @Test func signallingMessagesRoundTripAndAnythingElseIsRefused() throws {
        let key = Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation)
        let candidates = [VoiceCallCandidate(address: [169, 254, 77, 1], port: 40_000), VoiceCallCandidate(address: [127, 0, 0, 1], port: 1)]
        let messages = [
            VoiceCallSignal(kind: .invite, token: Self.token, publicKey: key, candidates: candidates),
            VoiceCallSignal(kind: .accept, token: Self.token, publicKey: key, candidates: []),
            VoiceCallSignal(kind: .deny, token: Self.token),
            VoiceCallSignal(kind: .hangUp, token: Self.token),
        ]
        for message in messages {
            #expect(VoiceCallSignal(bytes: message.bytes) == message)
            // Every truncation and one byte too many are refused.
            for length in 0..<message.bytes.count { #expect(VoiceCallSignal(bytes: message.bytes.prefix(length)) == nil) }
            #expect(VoiceCallSignal(bytes: message.bytes + [0]) == nil)
        }
        var invite = messages[0].bytes
        #expect(invite.count == 5 + 1 + 16 + 32 + 1 + 12)
        invite[4] = 2  // another version
        #expect(VoiceCallSignal(bytes: invite) == nil)
        var kind = messages[2].bytes
        kind[5] = 9
        #expect(VoiceCallSignal(bytes: kind) == nil)
        // Nine candidates are more than a message may offer; making one keeps eight.
        var nine = Array(messages[0].bytes.prefix(5 + 1 + 16 + 32)) + [9]
        for _ in 0..<9 { nine += [10, 0, 0, 1, 0, 80] }
        #expect(VoiceCallSignal(bytes: nine) == nil)
        #expect(VoiceCallSignal(kind: .invite, token: Self.token, publicKey: key, candidates: Array(repeating: candidates[0], count: 9)).candidates.count == 8)
    }

    @Test func bothSidesAgreeTheKeysAndOnlyTheirDatagramsOpenOnce() throws {
        let callerKey = Curve25519.KeyAgreement.PrivateKey(), calleeKey = Curve25519.KeyAgreement.PrivateKey()
        var caller = try #require(
            VoiceCallKeys(isCaller: true, privateKey: callerKey, remotePublicKey: Array(calleeKey.publicKey.rawRepresentation), token: Self.token))
        var callee = try #require(
            VoiceCallKeys(isCaller: false, privateKey: calleeKey, remotePublicKey: Array(callerKey.publicKey.rawRepresentation), token: Self.token))
        let voice: [UInt8] = [0x11, 0, 1, 0, 0, 0, 1, 0xAB]
        let sealed = caller.sealer.seal(.voice, voice)!
        // Nothing of the payload is in clear.
        #expect(!String(decoding: sealed, as: UTF8.self).contains(String(decoding: voice, as: UTF8.self)))
        let opened = callee.opener.open(sealed)
        #expect(opened?.kind == .voice && opened?.payload == voice)
        #expect(callee.opener.open(sealed) == nil, "a replayed datagram opened")
        // The other direction has its own key: the caller's datagram does not open as the callee's.
        let own = caller.sealer.seal(.keepAlive)!
        #expect(caller.opener.open(own) == nil)
        let back = callee.sealer.seal(.probeAnswer)!
        #expect(caller.opener.open(back)?.kind == .probeAnswer)
        // Every single-bit change is refused.
        let next = caller.sealer.seal(.voice, voice)!
        for index in next.indices {
            var altered = next
            altered[index] ^= 0x01
            #expect(callee.opener.open(altered) == nil, "a datagram altered at byte \(index) opened")
        }
        #expect(callee.opener.open(next)?.payload == voice)
        // Another call's token gives other keys.
        let other = try #require(
            VoiceCallKeys(
                isCaller: false, privateKey: calleeKey, remotePublicKey: Array(callerKey.publicKey.rawRepresentation),
                token: Array(repeating: 1, count: 16)))
        var otherOpener = other.opener
        let third = caller.sealer.seal(.voice, voice)!
        #expect(otherOpener.open(third) == nil)
        // A key that is not one is refused.
        #expect(VoiceCallKeys(isCaller: true, privateKey: callerKey, remotePublicKey: Array(repeating: 0, count: 32), token: Self.token) == nil)
        #expect(VoiceCallKeys(isCaller: true, privateKey: callerKey, remotePublicKey: [1, 2, 3], token: Self.token) == nil)
    }
}
