import Testing
@testable import OpenGameKitLAN

@Suite("DNSMessage codec")
struct DNSMessageTests {
    /// A query for `_ogk._tcp.local.` PTR with the QU bit, written byte by byte.
    static let queryBytes: [UInt8] = [
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x04, 0x5F, 0x6F, 0x67, 0x6B,  // _ogk
        0x04, 0x5F, 0x74, 0x63, 0x70,  // _tcp
        0x05, 0x6C, 0x6F, 0x63, 0x61, 0x6C, 0x00,  // local
        0x00, 0x0C, 0x80, 0x01,  // PTR, QU + IN
    ]

    /// A response PTR + SRV + A using compression pointers, written byte by byte.
    static let responseBytes: [UInt8] = [
        0x00, 0x00, 0x84, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
        // answer @12: _ogk._tcp.local. PTR Alice._ogk._tcp.local.
        0x04, 0x5F, 0x6F, 0x67, 0x6B, 0x04, 0x5F, 0x74, 0x63, 0x70, 0x05, 0x6C, 0x6F, 0x63, 0x61, 0x6C, 0x00,
        0x00, 0x0C, 0x00, 0x01, 0x00, 0x00, 0x11, 0x94, 0x00, 0x08,
        0x05, 0x41, 0x6C, 0x69, 0x63, 0x65, 0xC0, 0x0C,  // @39: Alice + ptr to 12
        // additional @47: Alice._ogk._tcp.local. SRV 0 0 8080 host.local. (cache flush)
        0xC0, 0x27, 0x00, 0x21, 0x80, 0x01, 0x00, 0x00, 0x00, 0x78, 0x00, 0x0D,
        0x00, 0x00, 0x00, 0x00, 0x1F, 0x90,
        0x04, 0x68, 0x6F, 0x73, 0x74, 0xC0, 0x16,  // @65: host + ptr to local. @22
        // additional @72: host.local. A 192.168.1.10 (cache flush)
        0xC0, 0x41, 0x00, 0x01, 0x80, 0x01, 0x00, 0x00, 0x00, 0x78, 0x00, 0x04, 0xC0, 0xA8, 0x01, 0x0A,
    ]

    @Test func decodesHandMadeQuery() throws {
        let message = try DNSMessage(bytes: Self.queryBytes)
        #expect(!message.isResponse)
        #expect(message.questions == [DNSQuestion(name: "_ogk._tcp.local.", type: .ptr, unicastResponse: true)])
        #expect(message.allRecords.isEmpty)
        #expect(try message.encoded() == Self.queryBytes)
    }

    @Test func decodesHandMadeCompressedResponse() throws {
        let message = try DNSMessage(bytes: Self.responseBytes)
        #expect(message.isResponse)
        let instance: DNSName = "Alice._ogk._tcp.local."
        #expect(message.answers == [DNSResourceRecord(name: "_ogk._tcp.local.", data: .ptr(instance), ttl: 4500)])
        #expect(
            message.additionals == [
                DNSResourceRecord(name: instance, data: .srv(priority: 0, weight: 0, port: 8080, target: "host.local."), ttl: 120, cacheFlush: true),
                DNSResourceRecord(name: "host.local.", data: .a(IPv4Address(192, 168, 1, 10)), ttl: 120, cacheFlush: true),
            ])
        // Our encoder compresses exactly the way the hand-made packet does.
        #expect(try message.encoded() == Self.responseBytes)
    }

    @Test func roundTripsAllRecordTypes() throws {
        let instance = DNSName(labels: ["Bob's Game. (2) ✓", "_ogk", "_tcp", "local"])
        let message = DNSMessage(
            id: 0x1234,
            flags: DNSMessage.responseFlag | DNSMessage.authoritativeFlag,
            questions: [DNSQuestion(name: instance, type: .any)],
            answers: [
                DNSResourceRecord(name: "_ogk._tcp.local.", data: .ptr(instance), ttl: 4500),
                DNSResourceRecord(name: instance, data: .txt(TXTRecord(["peer": "abc", "v": "1", "flag": nil, "empty": ""])), ttl: 4500, cacheFlush: true),
            ],
            authorities: [
                DNSResourceRecord(name: instance, data: .srv(priority: 1, weight: 2, port: 65535, target: "h-1.local."), ttl: 120)
            ],
            additionals: [
                DNSResourceRecord(name: "h-1.local.", data: .a(IPv4Address(10, 0, 0, 1)), ttl: 120, cacheFlush: true),
                DNSResourceRecord(
                    name: "h-1.local.", data: .aaaa(IPv6Address(bytes: [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1])!), ttl: 120, cacheFlush: true),
                DNSResourceRecord(
                    name: "h-1.local.", data: .nsec(nextName: "h-1.local.", types: [.a, .aaaa, .srv, DNSRecordType(rawValue: 1000)]), ttl: 120, cacheFlush: true
                ),
                DNSResourceRecord(name: "x.local.", data: .unknown(type: DNSRecordType(rawValue: 99), data: [1, 2, 3]), ttl: 7, recordClass: 3),
            ]
        )
        let bytes = try message.encoded()
        let decoded = try DNSMessage(bytes: bytes)
        #expect(decoded == message)
        #expect(decoded.answers[0].data == .ptr(instance))
        #expect(decoded.answers[0].name.description == "_ogk._tcp.local.")
        #expect(instance.description == "Bob's Game\\. (2) ✓._ogk._tcp.local.")
        #expect(DNSName(instance.description) == instance)
        // Compression actually happened: the uncompressed form is longer.
        var plain = DNSMessageEncoder(compress: false)
        try plain.writeMessage(message)
        #expect(plain.bytes.count > bytes.count)
        #expect(try DNSMessage(bytes: plain.bytes) == message)
    }

    /// "é" and "e" + U+0301 are equal Swift strings but different labels on the wire: the encoder, which looked names up
    /// by their strings, compressed the second name into a pointer to the first, and the message parsed back as another.
    @Test func compressionPointsOnlyAtTheSameBytes() throws {
        let composed = DNSName(labels: ["caf\u{E9}", "local"])
        let decomposed = DNSName(labels: ["cafe\u{301}", "local"])
        let message = DNSMessage.query([DNSQuestion(name: composed, type: .a), DNSQuestion(name: decomposed, type: .a)])
        let decoded = try DNSMessage(bytes: message.encoded())
        #expect(decoded == message)
        #expect(decoded.questions.map { Array($0.name.labels[0].utf8) } == [Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8)])
    }

    @Test func namesCompareCaseInsensitively() {
        #expect(DNSName("Host.LOCAL.") == DNSName("host.local"))
        #expect(Set([DNSName("A.b."), DNSName("a.B")]).count == 1)
        #expect(DNSName("x.y._ogk._tcp.local.").hasSuffix("_OGK._tcp.local."))
        #expect(DNSName("Émile.local") != DNSName("émile.local"))  // only ASCII folds
    }

    @Test func txtKeyValueRules() {
        let txt = TXTRecord(strings: [
            Array("Peer=abc".utf8), Array("peer=second".utf8), Array("bool".utf8), Array("e=".utf8), Array("=novalue".utf8), [], Array("x=a=b".utf8),
        ])
        let dictionary = txt.dictionary
        #expect(dictionary["peer"] == .some("abc"))
        #expect(dictionary["bool"] == .some(nil))
        #expect(dictionary["e"] == .some(""))
        #expect(dictionary["x"] == .some("a=b"))
        #expect(dictionary.count == 4)
        #expect(txt["PEER"] == .some("abc"))
        #expect(txt["missing"] == nil)
    }

    @Test func emptyTXTIsOneEmptyString() throws {
        var encoder = DNSMessageEncoder(compress: true)
        try encoder.writeRecordData(.txt(TXTRecord(strings: [])))
        #expect(encoder.bytes == [0])
        // Zero-length TXT data from the wire is normalised to that canonical form.
        let zeroLength: [UInt8] = [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0] + [0, 0, 16, 0, 1, 0, 0, 0, 1, 0, 0]
        #expect(try DNSMessage(bytes: zeroLength).answers.first?.data == .txt(TXTRecord(strings: [[]])))
    }

    @Test(
        arguments: [
            ("pointer to itself", [UInt8](repeating: 0, count: 4) + [0, 1, 0, 0, 0, 0, 0, 0] + [0xC0, 0x0C, 0, 1, 0, 1]),
            ("forward pointer", [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0] + [0xC0, 0x20, 0, 1, 0, 1]),
            ("pointer cycle", [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0] + [0x01, 0x61, 0xC0, 0x0C, 0, 1, 0, 1]),
            ("truncated header", [0, 0, 0]),
            ("counts beyond data", [0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]),
            ("label type 0x40", [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0] + [0x41, 0, 0, 1, 0, 1]),
            ("A with 3 bytes", [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0] + [0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 3, 1, 2, 3]),
            ("rdlength past end", [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0] + [0, 0, 16, 0, 1, 0, 0, 0, 1, 0, 9, 1]),
            ("PTR name overruns rdata", [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0] + [0, 0, 12, 0, 1, 0, 0, 0, 1, 0, 2, 3, 0x61, 0x62, 0x63, 0]),
        ] as [(String, [UInt8])])
    func rejectsMalformedInput(_ label: String, _ bytes: [UInt8]) {
        #expect(throws: DNSMessageError.self, "\(label)") { try DNSMessage(bytes: bytes) }
    }

    @Test func rejectsOverlongNames() {
        let long = DNSName(labels: [String](repeating: String(repeating: "a", count: 63), count: 4))
        #expect(throws: DNSMessageError.self) { try DNSMessage.query([DNSQuestion(name: long, type: .a)]).encoded() }
        let label64 = DNSName(labels: [String(repeating: "b", count: 64), "local"])
        #expect(throws: DNSMessageError.self) { try DNSMessage.query([DNSQuestion(name: label64, type: .a)]).encoded() }
    }
}
