import GameCenterProtocol
import NIOCore
import NetworkFaultProxy
import Testing

@Suite struct RelayFuzzTests {
    static let frameTypes: [UInt8] = Array(0x01...0x0A) + Array(0x11...0x17)
    static let datagramKinds: [UInt8] = [0x21, 0x22, 0x23, 0x24, 0x25, 0x26]

    /// Anything a decoder accepts must encode back to exactly the bytes it read.
    @Test func randomBytesNeverCrashOrOpen() throws {
        let seed = TestSeed(default: 0xF0F0_1234)
        var generator = SeededGenerator(seed: seed.value)
        var decodedFrames = 0
        for round in 0..<100_000 {
            var bytes = generator.bytes(Int.random(in: 0...300, using: &generator))
            if !bytes.isEmpty, Bool.random(using: &generator) {
                bytes[0] = Self.frameTypes.randomElement(using: &generator)!
            }
            let buffer = ByteBuffer(bytes: bytes)

            if let frame = try? RelayServerFrame.read(from: buffer) {
                decodedFrames += 1
                if encoded(frame) != buffer {
                    Issue.record("\(seed), round \(round): server frame \(frame) re-encodes differently")
                }
            }
            if let frame = try? RelayClientFrame.read(from: buffer) {
                decodedFrames += 1
                if encoded(frame) != buffer {
                    Issue.record("\(seed), round \(round): client frame \(frame) re-encodes differently")
                }
            }

            var datagram = buffer
            if datagram.readableBytes > 0, Bool.random(using: &generator) {
                datagram.setInteger(Self.datagramKinds.randomElement(using: &generator)!, at: 0)
            }
            if let header = RelayDatagram.peekHeader(datagram) {
                if header.kind.rawValue != datagram.getInteger(at: 0, as: UInt8.self)
                    || header.connectionID != datagram.getInteger(at: 1, as: UInt64.self)
                    || header.counter != datagram.getInteger(at: 9, as: UInt64.self)
                {
                    Issue.record("\(seed), round \(round): peekHeader misread \(header)")
                }
            }
            let key = RelayKey(bytes: generator.bytes(32))!
            if (try? RelayDatagram.open(datagram, key: key)) != nil {
                Issue.record("\(seed), round \(round): random bytes opened under a random key")
            }

            if let (recipients, payload) = try? RelayDatagram.readClientDataBody(buffer),
                RelayDatagram.clientDataBody(recipients: recipients, payload: payload) != buffer
            {
                Issue.record("\(seed), round \(round): client data body re-encodes differently")
            }
            if let (sender, payload) = try? RelayDatagram.readServerDataBody(buffer),
                RelayDatagram.serverDataBody(sender: sender, payload: payload) != buffer
            {
                Issue.record("\(seed), round \(round): server data body re-encodes differently")
            }
        }
        // Biasing the type byte must make some random frames decode, or the loop only tested the type check.
        #expect(decodedFrames > 1000, "\(seed)")
    }
}
