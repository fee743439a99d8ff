import Crypto
import Foundation
import GameCenterProtocol
import NIOCore
import OpenGameKitSessionWire
import Testing
@testable import OpenGameKit

@Suite("Session security")
struct SessionSecurityTests {
    @Test func bothSidesAgreeOnEveryKeyAndEachDirectionHasItsOwn() throws {
        let keys = try SessionKeysFixture()
        var toResponder = SealedStream(sealer: keys.initiator.recordSealer, opener: keys.responder.recordOpener)
        var toInitiator = SealedStream(sealer: keys.responder.recordSealer, opener: keys.initiator.recordOpener)
        #expect(try toResponder.receive(toResponder.seal([.data(Data("ping".utf8))])) == [.data(Data("ping".utf8))])
        #expect(try toInitiator.receive(toInitiator.seal([.data(Data("pong".utf8))])) == [.data(Data("pong".utf8))])
        // A record reflected back at its sender does not open: each direction has its own key.
        var reflected = SealedStream(sealer: keys.initiator.recordSealer, opener: keys.initiator.recordOpener)
        #expect(throws: SessionProtocolError.authenticationFailed) { try reflected.receive(reflected.seal([.heartbeat])) }

        // Datagrams: each side addresses the other's id, and opens only what the other sealed.
        #expect(keys.initiator.datagrams.sealer.receiverID == keys.responder.datagrams.opener.receiverID)
        #expect(keys.responder.datagrams.sealer.receiverID == keys.initiator.datagrams.opener.receiverID)
        #expect(keys.initiator.datagrams.opener.receiverID != keys.responder.datagrams.opener.receiverID)
        var initiator = keys.initiator.datagrams
        var responder = keys.responder.datagrams
        #expect(open(seal("to responder", with: &initiator.sealer), with: &responder.opener) == Data("to responder".utf8))
        #expect(open(seal("to initiator", with: &responder.sealer), with: &initiator.opener) == Data("to initiator".utf8))
        #expect(open(seal("reflected", with: &initiator.sealer), with: &initiator.opener) == nil)
    }

    @Test func twoChannelsHandshakeConfirmAndThenCarryFrames() throws {
        var initiator = SessionChannelSecurity(role: .initiator, passphrase: nil)
        var responder = SessionChannelSecurity(role: .responder, passphrase: nil)
        let (toResponder, toInitiator) = try exchangeHandshakes(&initiator, &responder)
        var initiatorSealer = toResponder
        var responderSealer = toInitiator
        guard case .confirmed(let initiatorDatagrams) = try initiator.receive(confirmation(&responderSealer)),
            case .confirmed(let responderDatagrams) = try responder.receive(confirmation(&initiatorSealer))
        else {
            Issue.record("no confirmation")
            return
        }
        #expect(initiatorDatagrams.sealer.receiverID == responderDatagrams.opener.receiverID)
        let hello = SessionFrame.hello(SessionHello(peerID: "1", displayName: "Alice", udpPort: 5))
        guard case .frame(let received) = try responder.receive(body(of: hello, with: &initiatorSealer)) else {
            Issue.record("no frame")
            return
        }
        #expect(received == hello)
        guard case .frame(.accept(udpPort: 6)) = try initiator.receive(body(of: .accept(udpPort: 6), with: &responderSealer)) else {
            Issue.record("no accept")
            return
        }
    }

    @Test func aFrameInPlaceOfTheConfirmationIsRefused() throws {
        var initiator = SessionChannelSecurity(role: .initiator, passphrase: nil)
        var responder = SessionChannelSecurity(role: .responder, passphrase: nil)
        var (sealer, _) = try exchangeHandshakes(&initiator, &responder)
        #expect(throws: SessionProtocolError.unexpectedFrame) { try responder.receive(body(of: .heartbeat, with: &sealer)) }
    }

    @Test func everyAlteredByteOfARecordIsRefused() throws {
        var stream = try SealedStream()
        let record = Array(stream.seal([.data(Data("a secret move".utf8))]).readableBytesView)
        for index in record.indices {
            var altered = record
            altered[index] ^= 0x20
            var receiver = SealedStream(sealer: stream.sealer, opener: stream.opener)
            // An altered length may first wait for more bytes; what follows then completes the record, which fails.
            #expect(throws: SessionProtocolError.self, "byte \(index)") {
                #expect(try receiver.receive(ByteBuffer(bytes: altered)).isEmpty)
                _ = try receiver.receive(ByteBuffer(repeating: 0, count: SessionRecord.maxLength))
            }
        }
        // The record itself, unaltered, opens (so it was the alteration that was refused).
        #expect(try stream.receive(ByteBuffer(bytes: record)) == [.data(Data("a secret move".utf8))])
    }

    @Test func truncatedRecordsAreRefused() throws {
        var stream = try SealedStream()
        let record = Array(stream.seal([.data(Data("twelve bytes".utf8))]).readableBytesView)
        // The last byte dropped and the length prefix fixed to match: the tag no longer checks.
        let shorter = [0, 0, 0, UInt8(record.count - 5)] + record[4..<(record.count - 1)]
        #expect(throws: SessionProtocolError.authenticationFailed) { try stream.receive(ByteBuffer(bytes: shorter)) }
        // A body shorter than a tag.
        var short = try SealedStream()
        #expect(throws: SessionProtocolError.authenticationFailed) { try short.receive(ByteBuffer(bytes: [0, 0, 0, 15] + record[4..<19])) }
    }

    @Test func reorderedDroppedAndReplayedRecordsAreRefused() throws {
        var sender = try SealedStream()
        let records = (0..<3).map { sender.seal([.data(Data([UInt8($0)]))]) }
        var reordered = SealedStream(sealer: sender.sealer, opener: sender.opener)
        #expect(try reordered.receive(records[0]) == [.data(Data([0]))])
        #expect(throws: SessionProtocolError.authenticationFailed) { try reordered.receive(records[2]) }
        var replayed = SealedStream(sealer: sender.sealer, opener: sender.opener)
        #expect(try replayed.receive(records[0]) == [.data(Data([0]))])
        #expect(throws: SessionProtocolError.authenticationFailed) { try replayed.receive(records[0]) }
        var inOrder = SealedStream(sealer: sender.sealer, opener: sender.opener)
        for (index, record) in records.enumerated() { #expect(try inOrder.receive(record) == [.data(Data([UInt8(index)]))]) }
    }

    @Test func samePassphraseConnectsAndAnyOtherFailsAtTheConfirmationOnBothSides() throws {
        let chess = try SessionPassphrase("knight to f3", sessionID: "chess")
        let other = try SessionPassphrase("bishop to c4", sessionID: "chess")
        #expect(try confirm(chess, chess))
        for (initiator, responder) in [(chess, other), (chess, nil), (nil, chess)] {
            var a = SessionChannelSecurity(role: .initiator, passphrase: initiator)
            var b = SessionChannelSecurity(role: .responder, passphrase: responder)
            var (aSealer, bSealer) = try exchangeHandshakes(&a, &b)
            #expect(throws: SessionProtocolError.authenticationFailed) { try a.receive(confirmation(&bSealer)) }
            #expect(throws: SessionProtocolError.authenticationFailed) { try b.receive(confirmation(&aSealer)) }
        }
    }

    @Test func passphrasesAreCheckedNormalizedAndTiedToTheSessionID() throws {
        for bad in ["seven!!", String(repeating: "x", count: 257), String(repeating: "é", count: 129)] {
            do {
                _ = try SessionPassphrase(bad, sessionID: "chess")
                Issue.record("\(bad.utf8.count) bytes accepted")
            } catch {
                #expect(error.code == .invalidParameter)
                #expect(error.message.contains("8 to 256 bytes of UTF-8"), "\(error.message)")
            }
        }
        let composed = try SessionPassphrase("caf\u{E9} au lait", sessionID: "chess")
        let decomposed = try SessionPassphrase("cafe\u{301} au lait", sessionID: "Chess")
        #expect(composed.key == decomposed.key)  // NFC, and session ids compared without case as in DNS-SD
        #expect(try confirm(composed, decomposed))
        #expect(try SessionPassphrase("caf\u{E9} au lait", sessionID: "draughts").key != composed.key)
        #expect(try SessionPassphrase(String(repeating: "x", count: 256), sessionID: "chess").key.bitCount == 256)
    }

    @Test func handshakesAreCheckedBeforeAnyKeyIsMade() throws {
        func receive(_ body: [UInt8]) throws(SessionProtocolError) {
            var channel = SessionChannelSecurity(role: .responder, passphrase: nil)
            _ = try channel.receive(ByteBuffer(bytes: body))
        }
        let valid = SessionChannelSecurity(role: .initiator, passphrase: nil).handshake.body
        // A version 1 peer's hello, which it sent in clear first.
        #expect(throws: SessionProtocolError.notAHandshake) {
            try receive(SessionFrame.hello(SessionHello(peerID: "1", displayName: "Old", udpPort: 1)).encoded())
        }
        #expect(throws: SessionProtocolError.incompatibleVersion(1)) { try receive(Array("OGK".utf8) + [1] + valid[4...]) }
        #expect(throws: SessionProtocolError.incompatibleVersion(3)) { try receive(Array("OGK".utf8) + [3]) }
        #expect(throws: SessionProtocolError.malformedHandshake) { try receive(Array(valid.dropLast())) }
        #expect(throws: SessionProtocolError.malformedHandshake) { try receive(valid + [0]) }
        // A low-order public key (all zeros) would make the shared secret known to anyone.
        #expect(throws: SessionProtocolError.malformedHandshake) { try receive(Array(valid[..<4]) + Array(repeating: 0, count: 32) + valid[36...]) }
        try receive(valid)
    }

    @Test func aHandshakeAlteredOnTheWayLeavesTheTwoSidesWithDifferentKeys() throws {
        var initiator = SessionChannelSecurity(role: .initiator, passphrase: nil)
        var responder = SessionChannelSecurity(role: .responder, passphrase: nil)
        var altered = responder.handshake.body
        altered[40] ^= 1  // in the random: the key agreement is the same, the transcript is not
        guard case .keysAgreed(var initiatorSealer) = try initiator.receive(ByteBuffer(bytes: altered)),
            case .keysAgreed(var responderSealer) = try responder.receive(ByteBuffer(bytes: initiator.handshake.body))
        else {
            Issue.record("no keys")
            return
        }
        #expect(throws: SessionProtocolError.authenticationFailed) { try initiator.receive(confirmation(&responderSealer)) }
        #expect(throws: SessionProtocolError.authenticationFailed) { try responder.receive(confirmation(&initiatorSealer)) }
    }

    @Test func theLastRecordNumberIsNeverUsed() throws {
        let cipher = ChaChaPolyCipher(key: SymmetricKey(size: .bits256))
        var sealer = SessionRecordSealer(cipher: cipher, counter: .max - 1)
        var buffer = ByteBuffer()
        #expect(sealer.write(into: &buffer, SessionFrame.heartbeat.encode))
        let written = buffer.readableBytes
        #expect(!sealer.write(into: &buffer, SessionFrame.heartbeat.encode))
        #expect(buffer.readableBytes == written)
        var opener = SessionRecordOpener(cipher: cipher, counter: .max - 1)
        var decoder = SessionRecordDecoder()
        decoder.feed(buffer)
        #expect(try decoder.next { body throws(SessionProtocolError) in try SessionFrame.decode(body: opener.open(body)) } == .heartbeat)
        #expect(throws: SessionProtocolError.recordLimitReached) { try opener.open(ByteBuffer(bytes: [UInt8](repeating: 0, count: 17))) }
    }

    @Test func datagramsOpenOnceAndOnlyUnaltered() throws {
        let keys = try SessionKeysFixture()
        var sealer = keys.initiator.datagrams.sealer
        var opener = keys.responder.datagrams.opener
        let first = seal("first", with: &sealer)
        let second = seal("second", with: &sealer)
        #expect(Array(first.prefix(4)) == Array("OGK".utf8) + [2])
        #expect(first.count == UnreliableDatagram.length(payloadCount: 5))
        // Out of order is fine (it is UDP), twice is not.
        #expect(open(second, with: &opener) == Data("second".utf8))
        #expect(open(first, with: &opener) == Data("first".utf8))
        #expect(open(first, with: &opener) == nil)
        #expect(open(second, with: &opener) == nil)
        // Any altered byte, a missing byte, a header alone.
        let third = seal("third", with: &sealer)
        for index in third.indices {
            var altered = third
            altered[index] ^= 0x01
            #expect(open(altered, with: &opener) == nil, "byte \(index)")
        }
        #expect(open(Array(third.dropLast()), with: &opener) == nil)
        #expect(open(Array(third.prefix(UnreliableDatagram.headerLength)), with: &opener) == nil)
        #expect(open(third, with: &opener) == Data("third".utf8))
        #expect(open(seal("", with: &sealer), with: &opener) == Data())  // an empty message is a message
        // More than 1023 behind the newest: refused, as the window no longer knows whether it was seen.
        let old = seal("old", with: &sealer)
        for _ in 0..<1024 { _ = sealer.nextHeader() }
        #expect(open(seal("new", with: &sealer), with: &opener) == Data("new".utf8))
        #expect(open(old, with: &opener) == nil)
    }

    // MARK: Helpers

    /// Gives each channel the other's handshake; returns the sealers they hand out (initiator's, responder's).
    private func exchangeHandshakes(
        _ initiator: inout SessionChannelSecurity, _ responder: inout SessionChannelSecurity
    ) throws -> (SessionRecordSealer, SessionRecordSealer) {
        guard case .keysAgreed(let initiatorSealer) = try initiator.receive(ByteBuffer(bytes: responder.handshake.body)),
            case .keysAgreed(let responderSealer) = try responder.receive(ByteBuffer(bytes: initiator.handshake.body))
        else { throw SessionProtocolError.unexpectedFrame }
        return (initiatorSealer, responderSealer)
    }

    /// Whether two channels with these passphrases both confirm.
    private func confirm(_ initiatorPassphrase: SessionPassphrase?, _ responderPassphrase: SessionPassphrase?) throws -> Bool {
        var initiator = SessionChannelSecurity(role: .initiator, passphrase: initiatorPassphrase)
        var responder = SessionChannelSecurity(role: .responder, passphrase: responderPassphrase)
        var (initiatorSealer, responderSealer) = try exchangeHandshakes(&initiator, &responder)
        guard case .confirmed = try initiator.receive(confirmation(&responderSealer)),
            case .confirmed = try responder.receive(confirmation(&initiatorSealer))
        else { return false }
        return true
    }

    /// The body of the empty confirmation record `sealer` writes.
    private func confirmation(_ sealer: inout SessionRecordSealer) -> ByteBuffer {
        var buffer = ByteBuffer()
        _ = sealer.write(into: &buffer) { _ in }
        buffer.moveReaderIndex(forwardBy: SessionRecord.lengthPrefixSize)
        return buffer
    }

    /// The body of the record `sealer` writes for `frame`.
    private func body(of frame: SessionFrame, with sealer: inout SessionRecordSealer) -> ByteBuffer {
        var buffer = ByteBuffer()
        _ = sealer.write(into: &buffer, frame.encode)
        buffer.moveReaderIndex(forwardBy: SessionRecord.lengthPrefixSize)
        return buffer
    }

    /// The datagram `sealer` makes of `message`.
    private func seal(_ message: String, with sealer: inout DatagramSealer) -> [UInt8] {
        let payload = Data(message.utf8)
        let header = sealer.nextHeader()!
        var bytes = [UInt8](repeating: 0, count: UnreliableDatagram.length(payloadCount: payload.count))
        bytes.withUnsafeMutableBytes { header.seal(payload, with: sealer.cipher, into: $0) }
        return bytes
    }

    /// The message `opener` finds in `datagram`, nil if none.
    private func open(_ datagram: [UInt8], with opener: inout DatagramOpener) -> Data? {
        let buffer = ByteBuffer(bytes: datagram)
        guard let header = UnreliableDatagram(header: buffer), header.receiverID == opener.receiverID else { return nil }
        return opener.open(buffer, header: header)
    }
}
