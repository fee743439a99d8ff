import GameCenterProtocol
import NIOCore
import Testing

@Suite struct RelayFrameRoundTripTests {
    @Test(arguments: serverFrames)
    func serverFrameRoundTrips(_ frame: RelayServerFrame) throws {
        let bytes = encoded(frame)
        let decoded = try RelayServerFrame.read(from: bytes)
        #expect(decoded == frame)
        #expect(encoded(decoded) == bytes)
    }

    @Test(arguments: clientFrames)
    func clientFrameRoundTrips(_ frame: RelayClientFrame) throws {
        let bytes = encoded(frame)
        let decoded = try RelayClientFrame.read(from: bytes)
        #expect(decoded == frame)
        #expect(encoded(decoded) == bytes)
    }

    @Test func largePayloadsRoundTrip() throws {
        let payload = pattern(87 * 1024)
        let server = RelayServerFrame.reliable(seq: 77, sender: 4, payload: payload)
        #expect(try RelayServerFrame.read(from: encoded(server)) == server)
        let client = RelayClientFrame.reliable(seq: 77, recipients: [4, 5], payload: payload)
        #expect(try RelayClientFrame.read(from: encoded(client)) == client)
    }

    @Test func payloadIsASliceOfTheFrame() throws {
        var bytes = ByteBuffer(bytes: [0xFF, 0xFF])
        bytes.moveReaderIndex(forwardBy: 2)
        RelayServerFrame.unreliable(sender: 1, payload: pattern(5)).write(to: &bytes)
        guard case .unreliable(let sender, let payload) = try RelayServerFrame.read(from: bytes) else {
            Issue.record("decoded the wrong case")
            return
        }
        #expect(sender == 1)
        #expect(payload == pattern(5))
        #expect(payload.readerIndex == 0)
    }

    @Test func welcomeCarriesEveryMember() throws {
        let frame = RelayServerFrame.welcome(welcome(members: manyMembers))
        guard case .welcome(let decoded) = try RelayServerFrame.read(from: encoded(frame)) else {
            Issue.record("decoded the wrong case")
            return
        }
        #expect(decoded.members.count == 255)
        #expect(decoded.members.last?.playerID.utf8.count == 255)
        #expect(decoded.key == fixedKey)
    }
}

@Suite struct RelayFrameLayoutTests {
    static let serverGolden: [([UInt8], RelayServerFrame)] = [
        ([0x02, 2, 2, 2, 0xC3, 0xA9], .memberState(RelayMember(index: 2, playerID: "é", state: .left))),
        (
            [0x03, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xAA, 0xBB],
            .reliable(seq: 0x0102_0304_0506_0708, sender: 9, payload: ByteBuffer(bytes: [0xAA, 0xBB]))
        ),
        ([0x04, 7], .unreliable(sender: 7, payload: ByteBuffer())),
        ([0x05, 0, 0, 0, 0, 0, 0, 1, 0], .ack(256)),
        ([0x06], .heartbeat),
        ([0x07, 1, 2, 0, 2, 0x68, 0x69], .error(code: 0x0102, message: "hi")),
        ([0x08, 4, 0, 1, 0x78], .closing(.flooding, message: "x")),
        ([0x08, 7, 0, 0], .closing(.protocolError, message: "")),
    ]

    static let clientGolden: [([UInt8], RelayClientFrame)] = [
        (
            [0x11, 0, 0, 0, 0, 0, 0, 0, 5, 3, 1, 1, 3, 0xEE],
            .reliable(seq: 5, recipients: [1, 1, 3], payload: ByteBuffer(bytes: [0xEE]))
        ),
        ([0x12, 0, 1, 2], .unreliable(recipients: [], payload: ByteBuffer(bytes: [1, 2]))),
        ([0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE], .ack(UInt64.max - 1)),
        ([0x14], .heartbeat),
        ([0x15], .leave),
    ]

    @Test(arguments: serverGolden)
    func serverFrameMatchesLayout(_ bytes: [UInt8], _ frame: RelayServerFrame) throws {
        #expect(Array(encoded(frame).readableBytesView) == bytes)
        #expect(try RelayServerFrame.read(from: ByteBuffer(bytes: bytes)) == frame)
    }

    @Test(arguments: clientGolden)
    func clientFrameMatchesLayout(_ bytes: [UInt8], _ frame: RelayClientFrame) throws {
        #expect(Array(encoded(frame).readableBytesView) == bytes)
        #expect(try RelayClientFrame.read(from: ByteBuffer(bytes: bytes)) == frame)
    }

    @Test func welcomeMatchesLayout() throws {
        let frame = RelayServerFrame.welcome(
            RelayWelcome(
                connectionID: 0x1122_3344_5566_7788,
                key: fixedKey,
                udpHost: "h",
                udpPort: 0x1E61,
                memberIndex: 1,
                acceptedSeq: 3,
                receiverStream: 0x0A0B,
                heartbeatMillis: 0x0102_0304,
                timeoutMillis: 0x0506_0708,
                maxMessagesPerSecond: 60,
                burstMessages: 600,
                members: [
                    RelayMember(index: 0, playerID: "a", state: .connected),
                    RelayMember(index: 1, playerID: "bc", state: .expected),
                ]
            ))
        var expected: [UInt8] = [0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]
        expected += (0..<32).map { UInt8($0) }
        expected += [0, 1, 0x68, 0x1E, 0x61, 1, 0, 0, 0, 0, 0, 0, 0, 3]
        expected += [0, 0, 0, 0, 0, 0, 0x0A, 0x0B]
        expected += [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 60, 0, 0, 0x02, 0x58, 2]
        expected += [0, 1, 1, 0x61, 1, 0, 2, 0x62, 0x63]
        expected += [1]  // flags: peer to peer
        #expect(Array(encoded(frame).readableBytesView) == expected)
        #expect(try RelayServerFrame.read(from: ByteBuffer(bytes: expected)) == frame)
    }
}

@Suite struct RelayFrameRejectionTests {
    static let fixedServerFrames = serverFrames.filter {
        switch $0 {
        case .reliable, .unreliable, .voice: false
        default: true
        }
    }

    static let fixedClientFrames = clientFrames.filter {
        switch $0 {
        case .reliable, .unreliable, .voice: false
        default: true
        }
    }

    /// Where the payload starts, for frames whose payload runs to the end.
    static func payloadOffset(_ frame: RelayServerFrame) -> Int? {
        switch frame {
        case .reliable: 10
        case .unreliable: 2
        case .voice(_, let channel, _): 3 + channel.utf8.count
        default: nil
        }
    }

    static func payloadOffset(_ frame: RelayClientFrame) -> Int? {
        switch frame {
        case .reliable(_, let recipients, _): 10 + recipients.count
        case .unreliable(let recipients, _): 2 + recipients.count
        case .voice(let channel, _): 2 + channel.utf8.count
        default: nil
        }
    }

    @Test(arguments: fixedServerFrames)
    func serverTrailingByteIsRejected(_ frame: RelayServerFrame) {
        var bytes = encoded(frame)
        bytes.writeInteger(UInt8(0))
        #expect(throws: RelayWireError.trailingBytes) { try RelayServerFrame.read(from: bytes) }
    }

    @Test(arguments: fixedClientFrames)
    func clientTrailingByteIsRejected(_ frame: RelayClientFrame) {
        var bytes = encoded(frame)
        bytes.writeInteger(UInt8(0))
        #expect(throws: RelayWireError.trailingBytes) { try RelayClientFrame.read(from: bytes) }
    }

    @Test func extraBytesLengthenAPayload() throws {
        var bytes = encoded(RelayServerFrame.unreliable(sender: 1, payload: ByteBuffer(bytes: [9])))
        bytes.writeInteger(UInt8(8))
        #expect(try RelayServerFrame.read(from: bytes) == .unreliable(sender: 1, payload: ByteBuffer(bytes: [9, 8])))
    }

    @Test(arguments: serverFrames)
    func everyServerTruncationIsRejected(_ frame: RelayServerFrame) throws {
        let bytes = encoded(frame)
        let headerEnd = Self.payloadOffset(frame) ?? bytes.readableBytes
        for length in 0..<headerEnd {
            let prefix = bytes.getSlice(at: bytes.readerIndex, length: length)!
            #expect(throws: RelayWireError.truncated, "prefix of \(length) bytes") {
                try RelayServerFrame.read(from: prefix)
            }
        }
        // Cut inside a payload, the frame is whole with a shorter payload: WebSocket messages carry the length.
        for length in headerEnd..<bytes.readableBytes {
            var prefix = bytes.getSlice(at: bytes.readerIndex, length: length)!
            let decoded = try RelayServerFrame.read(from: prefix)
            prefix.moveReaderIndex(forwardBy: headerEnd)
            switch decoded {
            case .reliable(_, _, let payload), .unreliable(_, let payload), .voice(_, _, let payload):
                #expect(payload == prefix)
            default:
                Issue.record("a cut payload frame decoded as \(decoded)")
            }
        }
    }

    @Test(arguments: clientFrames)
    func everyClientTruncationIsRejected(_ frame: RelayClientFrame) throws {
        let bytes = encoded(frame)
        let headerEnd = Self.payloadOffset(frame) ?? bytes.readableBytes
        for length in 0..<headerEnd {
            let prefix = bytes.getSlice(at: bytes.readerIndex, length: length)!
            #expect(throws: RelayWireError.truncated, "prefix of \(length) bytes") {
                try RelayClientFrame.read(from: prefix)
            }
        }
        for length in headerEnd..<bytes.readableBytes {
            var prefix = bytes.getSlice(at: bytes.readerIndex, length: length)!
            let decoded = try RelayClientFrame.read(from: prefix)
            prefix.moveReaderIndex(forwardBy: headerEnd)
            switch decoded {
            case .reliable(_, _, let payload), .unreliable(_, let payload), .voice(_, let payload):
                #expect(payload == prefix)
            default:
                Issue.record("a cut payload frame decoded as \(decoded)")
            }
        }
    }

    @Test func unknownTypeBytesAreRejected() {
        let serverTypes: ClosedRange<UInt8> = 0x01...0x0B
        let clientTypes: ClosedRange<UInt8> = 0x11...0x18
        for type in UInt8.min...UInt8.max {
            let bytes = ByteBuffer(bytes: [type] + [UInt8](repeating: 0, count: 40))
            if !serverTypes.contains(type) {
                #expect(throws: RelayWireError.unknownType(type)) { try RelayServerFrame.read(from: bytes) }
            }
            if !clientTypes.contains(type) {
                #expect(throws: RelayWireError.unknownType(type)) { try RelayClientFrame.read(from: bytes) }
            }
        }
    }

    @Test func emptyFrameIsTruncated() {
        #expect(throws: RelayWireError.truncated) { try RelayServerFrame.read(from: ByteBuffer()) }
        #expect(throws: RelayWireError.truncated) { try RelayClientFrame.read(from: ByteBuffer()) }
    }

    @Test(arguments: [[0xFF], [0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0x61, 0xF8, 0x88, 0x80, 0x80, 0x80]] as [[UInt8]])
    func invalidUTF8IsRejected(_ bad: [UInt8]) {
        let count = UInt8(bad.count)
        let frames: [[UInt8]] = [
            [0x02, 0, 1, count] + bad,
            [0x07, 0, 1, 0, count] + bad,
            [0x08, 1, 0, count] + bad,
        ]
        for bytes in frames {
            #expect(throws: RelayWireError.invalidUTF8) { try RelayServerFrame.read(from: ByteBuffer(bytes: bytes)) }
        }
        var welcomeBytes = encoded(RelayServerFrame.welcome(welcome(members: [], udpHost: "")))
        welcomeBytes.setInteger(UInt16(bad.count), at: 41)
        var badWelcome = welcomeBytes.getSlice(at: 0, length: 43)!
        badWelcome.writeBytes(bad)
        badWelcome.writeBytes(welcomeBytes.getSlice(at: 43, length: welcomeBytes.readableBytes - 43)!.readableBytesView)
        #expect(throws: RelayWireError.invalidUTF8) { try RelayServerFrame.read(from: badWelcome) }
    }

    @Test func memberStateThreeIsRejected() {
        #expect(throws: RelayWireError.invalidValue("member state 3")) {
            try RelayServerFrame.read(from: ByteBuffer(bytes: [0x02, 0, 3, 1, 0x61]))
        }
        var bytes = encoded(RelayServerFrame.welcome(welcome(members: [RelayMember(index: 0, playerID: "a", state: .left)])))
        bytes.setInteger(UInt8(3), at: bytes.writerIndex - 4)
        #expect(throws: RelayWireError.invalidValue("member state 3")) { try RelayServerFrame.read(from: bytes) }
    }

    @Test func emptyPlayerIDIsRejected() {
        #expect(throws: RelayWireError.invalidValue("empty player id")) {
            try RelayServerFrame.read(from: ByteBuffer(bytes: [0x02, 0, 1, 0]))
        }
        var bytes = encoded(RelayServerFrame.welcome(welcome(members: [RelayMember(index: 0, playerID: "a", state: .left)])))
        bytes.moveWriterIndex(to: bytes.writerIndex - 3)
        bytes.writeInteger(UInt8(0))
        #expect(throws: RelayWireError.invalidValue("empty player id")) { try RelayServerFrame.read(from: bytes) }
    }

    @Test(arguments: [0, 8, 255] as [UInt8])
    func unknownCloseReasonIsRejected(_ reason: UInt8) {
        #expect(throws: RelayWireError.invalidValue("close reason \(reason)")) {
            try RelayServerFrame.read(from: ByteBuffer(bytes: [0x08, reason, 0, 0]))
        }
    }

    @Test func overlongUDPHostIsRejected() {
        var bytes = encoded(RelayServerFrame.welcome(welcome(members: [], udpHost: String(repeating: "h", count: 255))))
        #expect(throws: Never.self) { try RelayServerFrame.read(from: bytes) }
        bytes.setInteger(UInt16(256), at: 41)
        bytes.writeInteger(UInt8(0))
        #expect(throws: RelayWireError.invalidValue("UDP host longer than 255 bytes")) {
            try RelayServerFrame.read(from: bytes)
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(RelayWireError.truncated.description == "relay frame truncated")
        #expect(RelayWireError.unknownType(0x1F).description.contains("0x1f"))
        #expect(RelayWireError.invalidValue("member state 3").description.contains("member state 3"))
        let all: [RelayWireError] = [
            .truncated, .unknownType(0), .invalidUTF8, .invalidValue("x"), .trailingBytes, .authenticationFailed,
        ]
        #expect(Set(all.map(\.description)).count == all.count)
        #expect(RelayWireError.unknownType(1) != .unknownType(2))
        #expect(RelayWireError.invalidValue("a") != .invalidValue("b"))
    }
}

/// Voice frames carry a channel name within `VoiceLimits` and a known membership, or are refused.
@Suite struct VoiceFrameRejectionTests {
    @Test(
        arguments: [
            ([0x16, 3, 4] + Array("team".utf8), "membership 3"),
            ([0x16, 1, 0], "an empty channel name"),
            ([0x16, 1, 33] + [UInt8](repeating: 0x61, count: 33), "a 33-byte channel name"),
            ([0x16, 1, 3, 0x61, 0x0A, 0x62], "a control character in the name"),
            ([0x17, 0] + [1, 2, 3], "voice on an empty channel name"),
        ] as [([UInt8], String)])
    func clientVoiceFramesOutsideTheLimitsAreRefused(_ bytes: [UInt8], _ what: String) {
        #expect(throws: RelayWireError.self, "\(what)") { try RelayClientFrame.read(from: ByteBuffer(bytes: bytes)) }
    }

    @Test func serverVoiceFramesOutsideTheLimitsAreRefused() {
        #expect(throws: RelayWireError.invalidValue("voice channel membership 9")) {
            try RelayServerFrame.read(from: ByteBuffer(bytes: [0x09, 1, 9, 1, 0x61]))
        }
        #expect(throws: RelayWireError.self) { try RelayServerFrame.read(from: ByteBuffer(bytes: [0x0A, 1, 0, 7, 7])) }
        #expect(throws: RelayWireError.invalidUTF8) { try RelayServerFrame.read(from: ByteBuffer(bytes: [0x0A, 1, 1, 0xFF, 7])) }
    }

    @Test func theVoiceLayoutIsAsDocumented() throws {
        #expect(Array(buffer: encoded(RelayClientFrame.voiceChannel(membership: .listening, channel: "ab"))) == [0x16, 2, 2, 0x61, 0x62])
        #expect(Array(buffer: encoded(RelayServerFrame.voice(sender: 4, channel: "ab", payload: ByteBuffer(bytes: [9])))) == [0x0A, 4, 2, 0x61, 0x62, 9])
    }
}

/// Voice datagrams: sealed and opened like data, the channel name inside the sealed body.
@Suite struct VoiceDatagramTests {
    @Test func aClientVoiceDatagramOpensToItsChannelAndPayload() throws {
        let key = RelayKey.random()
        let header = RelayDatagramHeader(kind: .clientVoice, connectionID: 7, counter: 1)
        let payload: [UInt8] = Array(0..<60)
        var space = [UInt8](repeating: 0, count: RelayDatagram.clientVoiceSize(channel: "team", payloadCount: payload.count))
        let length = space.withUnsafeMutableBytes { space in
            payload.withUnsafeBytes { RelayDatagram.sealClientVoice(header, channel: "team", payload: $0, key: key, in: space) }
        }
        #expect(length == space.count)
        let (opened, body) = try RelayDatagram.open(ByteBuffer(bytes: space), key: key)
        #expect(opened == header)
        let parsed = body.withUnsafeReadableBytes { RelayDatagram.readClientVoiceBody($0).map { ($0.channel, Array($0.payload)) } }
        #expect(parsed?.0 == "team")
        #expect(parsed?.1 == payload)
    }

    @Test func aServerVoiceDatagramNamesItsSender() throws {
        let key = RelayKey.random()
        let header = RelayDatagramHeader(kind: .serverVoice, connectionID: 9, counter: 4)
        var space = [UInt8](repeating: 0, count: RelayDatagram.serverVoiceSize(channel: "é", payloadCount: 3))
        _ = space.withUnsafeMutableBytes { space in
            [UInt8]([1, 2, 3]).withUnsafeBytes { RelayDatagram.sealServerVoice(header, sender: 5, channel: "é", payload: $0, key: key, in: space) }
        }
        let (_, body) = try RelayDatagram.open(ByteBuffer(bytes: space), key: key)
        let parsed = body.withUnsafeReadableBytes { RelayDatagram.readServerVoiceBody($0).map { ($0.sender, $0.channel, Array($0.payload)) } }
        #expect(parsed?.0 == 5)
        #expect(parsed?.1 == "é")
        #expect(parsed?.2 == [1, 2, 3])
    }

    @Test(arguments: [[], [0], [5, 0x61], [2, 0xFF, 0xFE, 1], [1, 0x07, 1]] as [[UInt8]])
    func malformedVoiceBodiesAreRefused(_ body: [UInt8]) {
        #expect(body.withUnsafeBytes { RelayDatagram.readClientVoiceBody($0) } == nil)
    }
}
