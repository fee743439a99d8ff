import Foundation
import NIOCore
import OpenGameKitSessionWire
import Testing
@testable import OpenGameKit
import OpenGameKitLAN
import NetworkFaultProxy

@Suite("Session framing")
struct SessionFrameTests {
    @Test func everyFrameRoundTrips() throws {
        let frames: [SessionFrame] = [
            .hello(SessionHello(peerID: "12345", displayName: "Alice ✓", udpPort: 40000)),
            .accept(udpPort: 65535),
            .deny(.declined), .deny(.full), .deny(.collision), .deny(.busy), .cancel,
            .data(Data()), .data(Data([1, 2, 3])), .data(Data(repeating: 7, count: SessionLimits.maxReliableMessage)),
            .heartbeat, .goodbye,
        ]
        for frame in frames { #expect(try SessionFrame.decode(body: ByteBuffer(bytes: frame.encoded())) == frame) }
        var stream = try SealedStream()
        #expect(try stream.receive(stream.seal(frames)) == frames)
        #expect(stream.decoder.bufferedByteCount == 0)
    }

    @Test func bytesArrivingOneAtATimeAreReassembled() throws {
        let frames: [SessionFrame] = [.data(Data(0..<200)), .heartbeat, .hello(SessionHello(peerID: "p", displayName: "", udpPort: 1))]
        var stream = try SealedStream()
        var decoded: [SessionFrame] = []
        for byte in stream.seal(frames).readableBytesView { decoded += try stream.receive(ByteBuffer(bytes: [byte])) }
        #expect(decoded == frames)
    }

    @Test func wireFormatIsKindPayloadSealedAfterALengthPrefix() throws {
        #expect(SessionFrame.heartbeat.encoded() == [6])
        #expect(SessionFrame.data(Data([0xAA, 0xBB])).encoded() == [5, 0xAA, 0xBB])
        #expect(SessionFrame.deny(.full).encoded() == [3, 1])
        #expect(SessionFrame.accept(udpPort: 0x1234).encoded() == [2, 0x12, 0x34])
        #expect(SessionFrame.hello(SessionHello(peerID: "7", displayName: "Al", udpPort: 9)).encoded() == [1, 0, 9, 1, 0x37, 2, 0x41, 0x6C])
        var stream = try SealedStream()
        let record = Array(stream.seal([.data(Data([0xAA, 0xBB]))]).readableBytesView)
        #expect(record.count == 4 + 3 + 16)
        #expect(record.prefix(4) == [0, 0, 0, 19])  // the frame's 3 bytes and the tag
        #expect(record[4..<7] != [5, 0xAA, 0xBB])  // encrypted
    }

    @Test func longStringsAreCutAtACharacterBoundary() throws {
        let name = String(repeating: "é", count: 200)  // 400 bytes
        let frame = SessionFrame.hello(SessionHello(peerID: "p", displayName: name, udpPort: 1))
        guard case .hello(let hello) = try SessionFrame.decode(body: ByteBuffer(bytes: frame.encoded())) else {
            Issue.record("no hello")
            return
        }
        #expect(hello.displayName == String(repeating: "é", count: 127))
    }

    @Test(arguments: [
        ([] as [UInt8], SessionProtocolError.emptyFrame),
        ([99], .unknownKind(99)),
        ([6, 0], .trailingBytes(kind: 6)),
        ([3, 77], .unknownDenyReason(77)),
        ([3], .truncated(kind: 3)),
        ([2, 1], .truncated(kind: 2)),
        ([1, 0, 1, 5, 0x61], .truncated(kind: 1)),
        ([1, 0, 1, 2, 0xC3, 0x28, 0], .invalidUTF8),
    ])
    func malformedFramesAreRejected(bytes: [UInt8], expected: SessionProtocolError) {
        #expect(throws: expected) { try SessionFrame.decode(body: ByteBuffer(bytes: bytes)) }
    }

    @Test(arguments: [
        ([0, 0, 0, 0] as [UInt8], SessionProtocolError.emptyRecord),
        ([0, 1, 0x5C, 0x12], .recordTooLong(89_106)),
        ([0xFF, 0xFF, 0xFF, 0xFF], .recordTooLong(0xFFFF_FFFF)),
    ])
    func badRecordLengthsAreRejectedAndTheDecoderStaysFailed(bytes: [UInt8], expected: SessionProtocolError) {
        var decoder = SessionRecordDecoder()
        decoder.feed(bytes)
        #expect(throws: expected) { try decoder.next { $0 } }
        #expect(throws: expected) { try decoder.next { $0 } }
    }

    @Test func largestDataFrameIsAcceptedAndOneMoreByteIsNot() throws {
        var stream = try SealedStream()
        let largest = SessionFrame.data(Data(repeating: 1, count: 89_088))
        #expect(try stream.receive(stream.seal([largest])) == [largest])
        let tooLarge = stream.seal([.data(Data(repeating: 1, count: 89_089))])
        #expect(throws: SessionProtocolError.recordTooLong(89_106)) { try stream.receive(tooLarge.getSlice(at: 0, length: 4)!) }
    }

    @Test func randomGarbageNeverCrashes() {
        var generator = TestSeed(default: 0x5E55_1011).generator
        for _ in 0..<5_000 {
            var decoder = SessionRecordDecoder()
            var security = SessionChannelSecurity(role: .responder, passphrase: nil)
            let count = Int.random(in: 0...140, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if bytes.count >= 4 { bytes[0] = 0; bytes[1] = 0 }  // plausible lengths, so the records' bodies are looked at
            if bytes.count >= 8, Bool.random(using: &generator) { bytes[4...7] = [0x4F, 0x47, 0x4B, 2] }  // a handshake's start
            decoder.feed(bytes)
            for _ in 0..<4 { _ = try? decoder.next { body throws(SessionProtocolError) in try security.receive(body) } }
        }
    }
}

@Suite("Session framing over ByteBuffers")
struct SessionFrameBufferTests {
    @Test func recordsSplitAndJoinedAcrossReadsComeOutWhole() throws {
        let frames: [SessionFrame] = (0..<6).map { .data(Data(repeating: UInt8($0), count: 30_000 + $0)) } + [.heartbeat, .goodbye]
        var stream = try SealedStream()
        var bytes = stream.seal(frames)
        // Reads of uneven sizes: some hold several records, some end inside a length prefix or a body.
        var decoded: [SessionFrame] = []
        var sizes = [3, 1, 70_000, 2, 65_536, 17, 1_000]
        while bytes.readableBytes > 0 {
            let size = min(sizes.isEmpty ? bytes.readableBytes : sizes.removeFirst(), bytes.readableBytes)
            decoded += try stream.receive(bytes.readSlice(length: size)!)
        }
        #expect(decoded == frames)
        #expect(stream.decoder.bufferedByteCount == 0)
    }

    @Test func anySplitOfTheStreamIntoReadsGivesTheSameFrames() throws {
        let frames: [SessionFrame] = (0..<14).map { index in
            index % 7 == 6 ? .heartbeat : .data(Data(repeating: UInt8(index), count: [0, 1, 3, 4_000, 65_536, SessionLimits.maxReliableMessage][index % 7]))
        }
        var random = SplitMix64(seed: 7)
        for round in 0..<12 {
            var stream = try SealedStream()
            var reads = stream.seal(frames)
            var decoded: [SessionFrame] = []
            while reads.readableBytes > 0 {
                let largest = [64, 300, 70_000, 300_000][round % 4]
                decoded += try stream.receive(reads.readSlice(length: min(Int(random.next() % UInt64(largest)) + 1, reads.readableBytes))!)
            }
            #expect(decoded == frames, "round \(round)")
            #expect(stream.decoder.bufferedByteCount == 0)
        }
    }

    @Test func aBadLengthSplitAcrossReadsIsRefusedBeforeItsBody() throws {
        var stream = try SealedStream()
        var bytes = stream.seal([.heartbeat])
        bytes.writeBytes([0x00, 0x10])
        #expect(try stream.receive(bytes) == [.heartbeat])
        #expect(throws: SessionProtocolError.recordTooLong(0x0010_0000)) { try stream.receive(ByteBuffer(bytes: [0x00, 0x00, 5])) }
        #expect(stream.decoder.bufferedByteCount == 0)

        var empty = SessionRecordDecoder()
        empty.feed([0, 0, 0])
        #expect(try empty.next { $0 } == nil)
        empty.feed([0, 1, 2])
        #expect(throws: SessionProtocolError.emptyRecord) { try empty.next { $0 } }
    }

    @Test func sealingAppendsAfterWhatIsAlreadyInTheBuffer() throws {
        let keys = try SessionKeysFixture()
        var sealer = keys.initiator.recordSealer
        var buffer = ByteBuffer(bytes: [0xEE])
        #expect(sealer.write(into: &buffer, SessionFrame.deny(.busy).encode))
        #expect(buffer.readInteger(as: UInt8.self) == 0xEE)
        var stream = SealedStream(sealer: sealer, opener: keys.responder.recordOpener)
        #expect(try stream.receive(buffer) == [.deny(.busy)])
    }
}
