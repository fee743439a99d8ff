import Foundation
import NIOCore
import Testing
@testable import OpenGameKit
import OpenGameKitLAN
import NetworkFaultProxy

@Suite("Session framing")
struct SessionFrameTests {
    let token = ConnectionToken(bytes: Array(1...16))!

    @Test func everyFrameRoundTrips() throws {
        let frames: [SessionFrame] = [
            .hello(SessionHello(version: 1, peerID: "12345", displayName: "Alice ✓", token: token, udpPort: 40000)),
            .accept(token: token, udpPort: 65535),
            .deny(.declined), .deny(.full), .deny(.collision), .cancel,
            .data(Data()), .data(Data([1, 2, 3])), .data(Data(repeating: 7, count: SessionLimits.maxReliableMessage)),
            .heartbeat, .goodbye,
        ]
        var decoder = SessionFrameDecoder()
        for frame in frames { decoder.feed(frame.encoded()) }
        for frame in frames { #expect(try decoder.next() == frame) }
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func bytesArrivingOneAtATimeAreReassembled() throws {
        let frames: [SessionFrame] = [
            .data(Data(0..<200)), .heartbeat, .hello(SessionHello(version: 1, peerID: "p", displayName: "", token: token, udpPort: 1)),
        ]
        var decoder = SessionFrameDecoder()
        var decoded: [SessionFrame] = []
        for byte in frames.flatMap({ $0.encoded() }) {
            decoder.feed([byte])
            while let frame = try decoder.next() { decoded.append(frame) }
        }
        #expect(decoded == frames)
    }

    @Test func wireFormatIsLengthKindPayload() {
        #expect(SessionFrame.heartbeat.encoded() == [0, 0, 0, 1, 6])
        #expect(SessionFrame.data(Data([0xAA, 0xBB])).encoded() == [0, 0, 0, 3, 5, 0xAA, 0xBB])
        #expect(SessionFrame.deny(.full).encoded() == [0, 0, 0, 2, 3, 1])
    }

    @Test func longStringsAreCutAtACharacterBoundary() throws {
        let name = String(repeating: "é", count: 200)  // 400 bytes
        let frame = SessionFrame.hello(SessionHello(version: 1, peerID: "p", displayName: name, token: token, udpPort: 1))
        var decoder = SessionFrameDecoder()
        decoder.feed(frame.encoded())
        guard case .hello(let hello)? = try decoder.next() else { Issue.record("no hello"); return }
        #expect(hello.displayName == String(repeating: "é", count: 127))
    }

    @Test(arguments: [
        ([0, 0, 0, 0] as [UInt8], SessionProtocolError.emptyFrame),
        ([0, 1, 0x5C, 0x02], .frameTooLong(89_090)),
        ([0xFF, 0xFF, 0xFF, 0xFF], .frameTooLong(0xFFFF_FFFF)),
        ([0, 0, 0, 1, 99], .unknownKind(99)),
        ([0, 0, 0, 2, 6, 0], .trailingBytes(kind: 6)),
        ([0, 0, 0, 2, 3, 77], .unknownDenyReason(77)),
        ([0, 0, 0, 3, 2, 1, 2], .truncated(kind: 2)),
        ([0, 0, 0, 1, 3], .truncated(kind: 3)),
    ])
    func malformedFramesAreRejected(bytes: [UInt8], expected: SessionProtocolError) {
        var decoder = SessionFrameDecoder()
        decoder.feed(bytes)
        #expect(throws: expected) { try decoder.next() }
        #expect(throws: expected) { try decoder.next() }  // stays failed
    }

    @Test func invalidUTF8InHelloIsRejected() {
        var body: [UInt8] = [1, 1] + token.bytes + [0, 1, 2, 0xC3, 0x28, 0]
        body = [0, 0, 0, UInt8(body.count)] + body
        var decoder = SessionFrameDecoder()
        decoder.feed(body)
        #expect(throws: SessionProtocolError.invalidUTF8) { try decoder.next() }
    }

    @Test func largestDataFrameIsAcceptedAndOneMoreByteIsNot() throws {
        var decoder = SessionFrameDecoder()
        decoder.feed(SessionFrame.data(Data(repeating: 1, count: 89_088)).encoded())
        #expect(try decoder.next() == .data(Data(repeating: 1, count: 89_088)))
        var big = SessionFrameDecoder()
        big.feed(SessionFrame.data(Data(repeating: 1, count: 89_089)).encoded().prefix(4))
        #expect(throws: SessionProtocolError.frameTooLong(89_090)) { try big.next() }
    }

    @Test func randomGarbageNeverCrashes() {
        var generator = TestSeed(default: 0x5E55_1011).generator
        for _ in 0..<5_000 {
            var decoder = SessionFrameDecoder()
            let count = Int.random(in: 0...64, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if bytes.count >= 4 { bytes[0] = 0; bytes[1] = 0 }  // plausible lengths, so payload parsing is exercised
            decoder.feed(bytes)
            for _ in 0..<4 { _ = try? decoder.next() }
        }
    }

    @Test func datagramsRoundTripAndRejectJunk() {
        let datagram = UnreliableDatagram(token: token, payload: Data(repeating: 9, count: 1000))
        #expect(UnreliableDatagram(bytes: datagram.encoded()) == datagram)
        #expect(UnreliableDatagram(bytes: datagram.encoded() + [1]) == nil)  // 1001-byte message
        #expect(UnreliableDatagram(bytes: Array("XGK".utf8) + [1] + token.bytes) == nil)
        #expect(UnreliableDatagram(bytes: [1, 2, 3]) == nil)
    }
}

@Suite("Session framing over ByteBuffers")
struct SessionFrameBufferTests {
    @Test func framesSplitAndJoinedAcrossReadsComeOutWhole() throws {
        let frames: [SessionFrame] = (0..<6).map { .data(Data(repeating: UInt8($0), count: 30_000 + $0)) } + [.heartbeat, .goodbye]
        var stream = ByteBuffer()
        for frame in frames { frame.encode(into: &stream) }
        // Reads of uneven sizes: some hold several frames, some end inside a length prefix or a payload.
        var decoder = SessionFrameDecoder()
        var decoded: [SessionFrame] = []
        var sizes = [3, 1, 70_000, 2, 65_536, 17, 1_000]
        while stream.readableBytes > 0 {
            let size = min(sizes.isEmpty ? stream.readableBytes : sizes.removeFirst(), stream.readableBytes)
            decoder.feed(stream.readSlice(length: size)!)
            while let frame = try decoder.next() { decoded.append(frame) }
        }
        #expect(decoded == frames)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func anySplitOfTheStreamIntoReadsGivesTheSameFrames() throws {
        let frames: [SessionFrame] = (0..<14).map { index in
            index % 7 == 6 ? .heartbeat : .data(Data(repeating: UInt8(index), count: [0, 1, 3, 4_000, 65_536, SessionLimits.maxReliableMessage][index % 7]))
        }
        var stream = ByteBuffer()
        for frame in frames { frame.encode(into: &stream) }
        var random = SplitMix64(seed: 7)
        for round in 0..<12 {
            var reads = stream
            var decoder = SessionFrameDecoder()
            var decoded: [SessionFrame] = []
            while reads.readableBytes > 0 {
                let largest = [64, 300, 70_000, 300_000][round % 4]
                decoder.feed(reads.readSlice(length: min(Int(random.next() % UInt64(largest)) + 1, reads.readableBytes))!)
                while let frame = try decoder.next() { decoded.append(frame) }
            }
            #expect(decoded == frames, "round \(round)")
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    @Test func aBadLengthSplitAcrossReadsIsRefusedBeforeItsPayload() throws {
        var decoder = SessionFrameDecoder()
        decoder.feed(SessionFrame.heartbeat.encoded() + [0x00, 0x10])
        #expect(try decoder.next() == .heartbeat)
        #expect(try decoder.next() == nil)
        decoder.feed([0x00, 0x00, 5])
        #expect(throws: SessionProtocolError.frameTooLong(0x0010_0000)) { try decoder.next() }
        #expect(decoder.bufferedByteCount == 0)

        var empty = SessionFrameDecoder()
        empty.feed([0, 0, 0])
        #expect(try empty.next() == nil)
        empty.feed([0, 1, 2])
        #expect(throws: SessionProtocolError.emptyFrame) { try empty.next() }
    }

    @Test func encodingIntoABufferMatchesTheByteArray() {
        let frames: [SessionFrame] = [.data(Data([1, 2, 3])), .deny(.busy), .accept(token: .random(), udpPort: 9)]
        for frame in frames {
            var buffer = ByteBuffer(bytes: [0xEE])  // appends after what is already there
            frame.encode(into: &buffer)
            #expect(Array(buffer.readableBytesView) == [0xEE] + frame.encoded())
        }
    }
}
