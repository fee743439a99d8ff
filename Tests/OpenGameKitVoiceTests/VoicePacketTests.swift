import Testing
@testable import OpenGameKitVoice

@Suite struct VoicePacketTests {
    @Test func roundTripsTheDocumentedLayout() throws {
        let packet = try VoicePacket(speaking: true, sequence: 0xBEEF, timestamp: 0x0102_0304, opus: [0xF8, 1, 2])
        #expect(packet.bytes == [0x11, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04, 0xF8, 1, 2])
        #expect(try VoicePacket(bytes: packet.bytes) == packet)
        let quiet = try VoicePacket(speaking: false, sequence: 1, timestamp: 2, opus: [0xF8])
        #expect(quiet.bytes[0] == 0x10)
        #expect(try VoicePacket(bytes: quiet.bytes) == quiet)
    }

    @Test func rejectsMalformedInput() {
        let cases: [([UInt8], String)] = [
            ([], "at least 8 bytes"),
            ([0x10, 0, 1, 0, 0, 0, 1], "at least 8 bytes"),
            ([0x20, 0, 1, 0, 0, 0, 1, 0xF8], "version 2 is not supported"),
            ([0x12, 0, 1, 0, 0, 0, 1, 0xF8], "reserved bits"),
            ([0x10, 0, 1, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 1276), "at most 1275"),
        ]
        for (bytes, fragment) in cases {
            do {
                _ = try VoicePacket(bytes: bytes)
                Issue.record("\(bytes.count) bytes parsed")
            } catch {
                #expect(error.code == .malformedPacket)
                #expect(error.message.contains(fragment), "\(error.message)")
            }
        }
        #expect(throws: VoiceError.self) { try VoicePacket(speaking: false, sequence: 0, timestamp: 0, opus: []) }
    }
}
