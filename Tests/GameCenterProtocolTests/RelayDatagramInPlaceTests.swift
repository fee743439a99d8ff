import NIOCore
import Testing
@testable import GameCenterProtocol

/// Sealing and opening where the datagram lies give the bytes swift-crypto's `ChaChaPoly` gives (the `ByteBuffer`
/// forms with a key without the kept context), with both ciphers.
@Suite struct RelayDatagramInPlaceTests {
    static let keys = [RelayCipherTests.fast, RelayCipherTests.portable]
    /// The reference: the same key bytes, always through swift-crypto.
    static let reference = RelayCipherTests.portable

    @Test(arguments: [0, 1, 16, 100, 1000, 1256])
    func sealingInPlaceMatchesSealingABuffer(_ size: Int) {
        let header = RelayDatagramHeader(kind: .serverData, connectionID: 0xABCD, counter: UInt64(size) + 3)
        for key in Self.keys {
            var expected = ByteBuffer()
            RelayDatagram.seal(header, body: pattern(size), key: Self.reference, into: &expected)
            var space = [UInt8](repeating: 0xEE, count: size + 40)
            let length = space.withUnsafeMutableBytes { space in
                pattern(size).withUnsafeReadableBytes { UnsafeMutableRawBufferPointer(rebasing: space[17...]).copyMemory(from: $0) }
                return RelayDatagram.sealInPlace(header, bodyCount: size, key: key, in: space)
            }
            #expect(length == size + 33)
            #expect(Array(space[..<length]) == Array(expected.readableBytesView), "key context \(key.cipher.context != nil)")
        }
    }

    @Test(arguments: [0, 1, 100, 1256])
    func openingInPlaceGivesTheBodyWhereItLies(_ size: Int) throws {
        let header = RelayDatagramHeader(kind: .clientData, connectionID: 77, counter: 9)
        for key in Self.keys {
            var sealed = ByteBuffer()
            RelayDatagram.seal(header, body: pattern(size), key: Self.reference, into: &sealed)
            var bytes = Array(sealed.readableBytesView)
            let body = try bytes.withUnsafeMutableBytes { datagram -> [UInt8] in
                let peeked = try #require(RelayDatagram.peekHeader(UnsafeRawBufferPointer(datagram)))
                #expect(peeked == header)
                let body = try #require(RelayDatagram.openInPlace(datagram, header: peeked, key: key))
                #expect(body.baseAddress == datagram.baseAddress! + RelayDatagram.headerSize)
                return Array(body)
            }
            #expect(body == Array(pattern(size).readableBytesView))
        }
    }

    @Test func tamperedOrOverlongDatagramsDoNotOpen() {
        let header = RelayDatagramHeader(kind: .clientData, connectionID: 1, counter: 1)
        for key in Self.keys {
            var sealed = ByteBuffer()
            RelayDatagram.seal(header, body: pattern(100), key: Self.reference, into: &sealed)
            for index in [0, 9, 17, sealed.readableBytes - 1] {
                var bytes = Array(sealed.readableBytesView)
                bytes[index] ^= 0x40
                let opened = bytes.withUnsafeMutableBytes { RelayDatagram.openInPlace($0, header: header, key: key) }
                #expect(opened == nil, "byte \(index)")
            }
            var overlong = [UInt8](repeating: 1, count: RelayDatagram.maximumSize + 1)
            #expect(overlong.withUnsafeMutableBytes { RelayDatagram.openInPlace($0, header: header, key: key) } == nil)
        }
    }

    @Test func dataBodiesMatchTheBufferForms() throws {
        let key = RelayCipherTests.fast
        let payload = pattern(50)
        let serverHeader = RelayDatagramHeader(kind: .serverData, connectionID: 3, counter: 4)
        var space = [UInt8](repeating: 0, count: RelayDatagram.serverDataSize(payloadCount: 50))
        let serverLength = space.withUnsafeMutableBytes { space in
            payload.withUnsafeReadableBytes { RelayDatagram.sealServerData(serverHeader, sender: 2, payload: $0, key: key, in: space) }
        }
        var expected = ByteBuffer()
        RelayDatagram.seal(serverHeader, body: RelayDatagram.serverDataBody(sender: 2, payload: payload), key: Self.reference, into: &expected)
        #expect(serverLength == space.count && space == Array(expected.readableBytesView))
        let (sender, opened) = try space.withUnsafeMutableBytes { datagram in
            let body = try #require(RelayDatagram.openInPlace(datagram, header: serverHeader, key: key))
            let (sender, payload) = try #require(RelayDatagram.readServerDataBody(UnsafeRawBufferPointer(body)))
            return (sender, Array(payload))
        }
        #expect(sender == 2 && opened == Array(payload.readableBytesView))

        let clientHeader = RelayDatagramHeader(kind: .clientData, connectionID: 3, counter: 5)
        space = [UInt8](repeating: 0, count: RelayDatagram.clientDataSize(recipientCount: 2, payloadCount: 50))
        let clientLength = space.withUnsafeMutableBytes { space in
            payload.withUnsafeReadableBytes { RelayDatagram.sealClientData(clientHeader, recipients: [1, 3], payload: $0, key: key, in: space) }
        }
        expected.clear()
        RelayDatagram.seal(clientHeader, body: RelayDatagram.clientDataBody(recipients: [1, 3], payload: payload), key: Self.reference, into: &expected)
        #expect(clientLength == space.count && space == Array(expected.readableBytesView))
        let (recipients, clientPayload) = try space.withUnsafeMutableBytes { datagram in
            let body = try #require(RelayDatagram.openInPlace(datagram, header: clientHeader, key: key))
            let (recipients, payload) = try #require(RelayDatagram.readClientDataBody(UnsafeRawBufferPointer(body)))
            return (Array(recipients), Array(payload))
        }
        #expect(recipients == [1, 3] && clientPayload == Array(payload.readableBytesView))
    }

    @Test func bodiesThatEndEarlyAreRejected() {
        // A recipient count of 5 with 2 bytes after it; an empty server body has no sender.
        #expect([UInt8]([5, 1, 2]).withUnsafeBytes { RelayDatagram.readClientDataBody($0) } == nil)
        #expect([UInt8]().withUnsafeBytes { RelayDatagram.readClientDataBody($0) } == nil)
        #expect([UInt8]().withUnsafeBytes { RelayDatagram.readServerDataBody($0) } == nil)
        #expect([UInt8]([0, 9]).withUnsafeBytes { RelayDatagram.readClientDataBody($0).map { Array($0.payload) } } == [9])
    }
}
