import NIOCore
import Testing
@testable import GameCenterProtocol

/// The kept BoringSSL context and swift-crypto's `ChaChaPoly` (what Apple platforms use) make the same datagrams.
@Suite struct RelayCipherTests {
    static let keyBytes = (0..<32).map { UInt8(255 - $0) }
    static let fast = RelayKey(bytes: keyBytes, fastCipher: true)!
    static let portable = RelayKey(bytes: keyBytes, fastCipher: false)!

    @Test func linuxUsesTheKeptContext() {
        #if os(Linux)
        #expect(Self.fast.cipher.context != nil)
        #endif
        #expect(Self.portable.cipher.context == nil)
        #expect(Self.fast == Self.portable)
    }

    @Test(arguments: [0, 1, 15, 16, 17, 63, 64, 65, 100, 1000, 1256])
    func bothSealTheSameBytesAndOpenEachOther(_ size: Int) throws {
        for kind in [RelayDatagramKind.clientData, .serverProbeAck] {
            let header = RelayDatagramHeader(kind: kind, connectionID: 0xDEAD_BEEF, counter: UInt64(size) + 7)
            var byFast = ByteBuffer(), byPortable = ByteBuffer()
            RelayDatagram.seal(header, body: pattern(size), key: Self.fast, into: &byFast)
            RelayDatagram.seal(header, body: pattern(size), key: Self.portable, into: &byPortable)
            #expect(byFast == byPortable)
            #expect(try RelayDatagram.open(byFast, key: Self.portable).body == pattern(size))
            #expect(try RelayDatagram.open(byPortable, key: Self.fast).body == pattern(size))
        }
    }

    @Test func tamperingFailsOnBoth() {
        let header = RelayDatagramHeader(kind: .serverData, connectionID: 1, counter: 1)
        for size in [0, 100] {
            var datagram = ByteBuffer()
            RelayDatagram.seal(header, body: pattern(size), key: Self.fast, into: &datagram)
            for index in [0, 16, 17, datagram.readableBytes - 1] {
                var tampered = datagram
                tampered.setInteger(datagram.getInteger(at: index, as: UInt8.self)! ^ 0x40, at: index)
                for key in [Self.fast, Self.portable] {
                    #expect(throws: RelayWireError.authenticationFailed, "size \(size) byte \(index)") {
                        try RelayDatagram.open(tampered, key: key)
                    }
                }
            }
        }
    }

    @Test func sealingAfterOtherBytesAuthenticatesOnlyTheHeader() throws {
        var buffer = ByteBuffer(bytes: [9, 9, 9])
        RelayDatagram.seal(RelayDatagramHeader(kind: .clientData, connectionID: 5, counter: 5), body: pattern(40), key: Self.fast, into: &buffer)
        buffer.moveReaderIndex(forwardBy: 3)
        #expect(try RelayDatagram.open(buffer, key: Self.portable).body == pattern(40))
    }
}
