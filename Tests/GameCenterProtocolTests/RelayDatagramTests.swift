import Crypto
import GameCenterProtocol
import NIOCore
import Testing

@Suite struct RelayDatagramTests {
    static func sealed(
        _ header: RelayDatagramHeader,
        body: ByteBuffer = pattern(100),
        key: RelayKey = fixedKey
    ) -> ByteBuffer {
        var buffer = ByteBuffer()
        RelayDatagram.seal(header, body: body, key: key, into: &buffer)
        return buffer
    }

    static let clientHeader = RelayDatagramHeader(kind: .clientData, connectionID: 0xC0FFEE, counter: 42)

    @Test(arguments: [
        RelayDatagramKind.clientData, .clientProbe, .serverData, .serverProbeAck,
    ])
    func sealOpenRoundTrips(_ kind: RelayDatagramKind) throws {
        let header = RelayDatagramHeader(kind: kind, connectionID: .max, counter: 1)
        for bodySize in [0, 1, 100, 1000] {
            let datagram = Self.sealed(header, body: pattern(bodySize))
            #expect(datagram.readableBytes == RelayDatagram.headerSize + bodySize + RelayDatagram.tagSize)
            let (openedHeader, body) = try RelayDatagram.open(datagram, key: fixedKey)
            #expect(openedHeader == header)
            #expect(body == pattern(bodySize))
            #expect(RelayDatagram.peekHeader(datagram) == header)
        }
    }

    @Test func directionFollowsKind() {
        #expect(!RelayDatagramKind.clientData.fromServer)
        #expect(!RelayDatagramKind.clientProbe.fromServer)
        #expect(RelayDatagramKind.serverData.fromServer)
        #expect(RelayDatagramKind.serverProbeAck.fromServer)
    }

    /// Rebuilds the datagram from the spec's layout with swift-crypto directly, so the nonce and AAD are pinned.
    @Test(arguments: [
        RelayDatagramHeader(kind: .clientData, connectionID: 0x0102_0304_0506_0708, counter: 0x1122_3344_5566_7788),
        RelayDatagramHeader(kind: .serverData, connectionID: 9, counter: 1),
    ])
    func layoutMatchesSpec(_ header: RelayDatagramHeader) throws {
        let body = pattern(100)
        var headerBytes = ByteBuffer()
        headerBytes.writeInteger(header.kind.rawValue)
        headerBytes.writeInteger(header.connectionID)
        headerBytes.writeInteger(header.counter)
        var nonceBytes = ByteBuffer()
        nonceBytes.writeInteger(UInt32(header.kind.fromServer ? 1 : 0))
        nonceBytes.writeInteger(header.counter)
        let box = try ChaChaPoly.seal(
            Array(body.readableBytesView),
            using: SymmetricKey(data: fixedKey.bytes),
            nonce: ChaChaPoly.Nonce(data: Array(nonceBytes.readableBytesView)),
            authenticating: Array(headerBytes.readableBytesView)
        )
        let expected = Array(headerBytes.readableBytesView) + Array(box.ciphertext) + Array(box.tag)
        #expect(Array(Self.sealed(header, body: body).readableBytesView) == expected)
    }

    @Test func sealAppendsAndOpenReadsOnlyReadableBytes() throws {
        var buffer = ByteBuffer(bytes: [0xAB, 0xCD, 0xEF])
        buffer.moveReaderIndex(forwardBy: 1)
        RelayDatagram.seal(Self.clientHeader, body: pattern(10), key: fixedKey, into: &buffer)
        #expect(Array(buffer.readableBytesView.prefix(2)) == [0xCD, 0xEF])
        buffer.moveReaderIndex(forwardBy: 2)
        let (header, body) = try RelayDatagram.open(buffer, key: fixedKey)
        #expect(header == Self.clientHeader)
        #expect(body == pattern(10))
    }

    @Test func everySingleBitFlipFailsAuthentication() {
        let datagram = Self.sealed(Self.clientHeader)
        for byteIndex in 0..<datagram.readableBytes {
            for bit in 0..<8 {
                var tampered = datagram
                tampered.setInteger(datagram.getInteger(at: byteIndex, as: UInt8.self)! ^ (1 << bit), at: byteIndex)
                #expect(throws: RelayWireError.authenticationFailed, "byte \(byteIndex) bit \(bit)") {
                    try RelayDatagram.open(tampered, key: fixedKey)
                }
            }
        }
    }

    @Test func wrongKeyFails() {
        let datagram = Self.sealed(Self.clientHeader)
        var nearlyRight = fixedKey.bytes
        nearlyRight[31] ^= 1
        for key in [RelayKey.random(), RelayKey(bytes: nearlyRight)!] {
            #expect(throws: RelayWireError.authenticationFailed) { try RelayDatagram.open(datagram, key: key) }
        }
    }

    @Test(arguments: [
        (RelayDatagramKind.clientData, RelayDatagramKind.serverData),
        (.clientProbe, .serverProbeAck),
        (.serverData, .clientData),
        (.clientData, .clientProbe),
    ])
    func relabelledKindFails(_ from: RelayDatagramKind, _ to: RelayDatagramKind) {
        var datagram = Self.sealed(RelayDatagramHeader(kind: from, connectionID: 5, counter: 6))
        datagram.setInteger(to.rawValue, at: 0)
        #expect(RelayDatagram.peekHeader(datagram)?.kind == to)
        #expect(throws: RelayWireError.authenticationFailed) { try RelayDatagram.open(datagram, key: fixedKey) }
    }

    @Test func changedCounterOrConnectionFails() {
        var counterChanged = Self.sealed(Self.clientHeader)
        counterChanged.setInteger(Self.clientHeader.counter + 1, at: 9)
        #expect(throws: RelayWireError.authenticationFailed) { try RelayDatagram.open(counterChanged, key: fixedKey) }
        var connectionChanged = Self.sealed(Self.clientHeader)
        connectionChanged.setInteger(Self.clientHeader.connectionID + 1, at: 1)
        #expect(throws: RelayWireError.authenticationFailed) {
            try RelayDatagram.open(connectionChanged, key: fixedKey)
        }
    }

    @Test func sizeLimits() throws {
        let probe = Self.sealed(RelayDatagramHeader(kind: .clientProbe, connectionID: 1, counter: 1), body: ByteBuffer())
        #expect(probe.readableBytes == RelayDatagram.headerSize + RelayDatagram.tagSize)
        for length in 0..<probe.readableBytes {
            let prefix = probe.getSlice(at: 0, length: length)!
            #expect(throws: RelayWireError.truncated) { try RelayDatagram.open(prefix, key: fixedKey) }
            #expect(RelayDatagram.peekHeader(prefix) == nil)
        }
        let longest = Self.sealed(Self.clientHeader, body: pattern(1 + 255 + 1000))
        #expect(longest.readableBytes == RelayDatagram.maximumSize)
        #expect(try RelayDatagram.open(longest, key: fixedKey).body == pattern(1256))
        let tooLong = Self.sealed(Self.clientHeader, body: pattern(1 + 255 + 1001))
        #expect(throws: RelayWireError.invalidValue("datagram longer than \(RelayDatagram.maximumSize) bytes")) {
            try RelayDatagram.open(tooLong, key: fixedKey)
        }
        var shortened = Self.sealed(Self.clientHeader)
        shortened.moveWriterIndex(to: shortened.writerIndex - 1)
        #expect(throws: RelayWireError.authenticationFailed) { try RelayDatagram.open(shortened, key: fixedKey) }
    }

    @Test func peekRejectsUnknownKinds() {
        var datagram = Self.sealed(Self.clientHeader)
        #expect(RelayDatagram.peekHeader(datagram) == Self.clientHeader)
        for kind in UInt8.min...UInt8.max where RelayDatagramKind(rawValue: kind) == nil {
            datagram.setInteger(kind, at: 0)
            #expect(RelayDatagram.peekHeader(datagram) == nil)
            #expect(throws: RelayWireError.authenticationFailed) { try RelayDatagram.open(datagram, key: fixedKey) }
        }
    }

    @Test func clientDataBodyRoundTrips() throws {
        for recipients in [[], [3], [1, 1, 2], (0...254).map { UInt8($0) }] as [[UInt8]] {
            for payloadSize in [0, 1, 1000] {
                let body = RelayDatagram.clientDataBody(recipients: recipients, payload: pattern(payloadSize))
                #expect(body.readableBytes == 1 + recipients.count + payloadSize)
                #expect(body.getInteger(at: 0, as: UInt8.self) == UInt8(recipients.count))
                let read = try RelayDatagram.readClientDataBody(body)
                #expect(read.recipients == recipients)
                #expect(read.payload == pattern(payloadSize))
            }
        }
    }

    @Test func serverDataBodyRoundTrips() throws {
        for payloadSize in [0, 1, 1000] {
            let body = RelayDatagram.serverDataBody(sender: 200, payload: pattern(payloadSize))
            #expect(body.getInteger(at: 0, as: UInt8.self) == 200)
            let read = try RelayDatagram.readServerDataBody(body)
            #expect(read.sender == 200)
            #expect(read.payload == pattern(payloadSize))
        }
    }

    @Test func malformedBodiesAreRejected() {
        #expect(throws: RelayWireError.truncated) { try RelayDatagram.readClientDataBody(ByteBuffer()) }
        #expect(throws: RelayWireError.truncated) { try RelayDatagram.readClientDataBody(ByteBuffer(bytes: [3, 1, 2])) }
        #expect(throws: RelayWireError.truncated) { try RelayDatagram.readServerDataBody(ByteBuffer()) }
    }

    @Test func sealedBodyOpensToTheSameRecipients() throws {
        let body = RelayDatagram.clientDataBody(recipients: [4, 2], payload: pattern(30))
        let (_, opened) = try RelayDatagram.open(Self.sealed(Self.clientHeader, body: body), key: fixedKey)
        let read = try RelayDatagram.readClientDataBody(opened)
        #expect(read.recipients == [4, 2])
        #expect(read.payload == pattern(30))
    }
}

@Suite struct RelayKeyTests {
    @Test func onlyThirtyTwoBytesMakeAKey() {
        #expect(RelayKey(bytes: [UInt8](repeating: 1, count: 31)) == nil)
        #expect(RelayKey(bytes: [UInt8](repeating: 1, count: 33)) == nil)
        #expect(RelayKey(bytes: [UInt8]()) == nil)
        let bytes = (0..<32).map { UInt8(255 - $0) }
        #expect(RelayKey(bytes: bytes)?.bytes == bytes)
        #expect(RelayKey(bytes: bytes[...]) == RelayKey(bytes: bytes))
    }

    @Test func randomKeysDiffer() {
        let first = RelayKey.random()
        let second = RelayKey.random()
        #expect(first.bytes.count == 32)
        #expect(first != second)
        #expect(first == RelayKey(bytes: first.bytes))
    }
}
