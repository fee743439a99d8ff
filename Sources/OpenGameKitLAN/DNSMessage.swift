/// A DNS message (RFC 1035 §4) as used by Multicast DNS: header, questions and three record sections.
///
/// Parse with ``init(bytes:)``, which never traps and throws ``DNSMessageError`` for malformed input;
/// encode with ``encoded()``, which compresses names. Section counts are derived from the arrays.
public struct DNSMessage: Hashable, Sendable, CustomStringConvertible {
    /// The QR bit: set in responses.
    public static let responseFlag: UInt16 = 0x8000
    /// The AA bit: mDNS responses are always authoritative.
    public static let authoritativeFlag: UInt16 = 0x0400
    /// The TC bit: in mDNS queries it means more known answers follow (RFC 6762 §7.2).
    public static let truncatedFlag: UInt16 = 0x0200

    /// The message identifier; zero for multicast mDNS messages.
    public var id: UInt16
    /// The raw header flags word (QR, opcode, AA, TC, RD, RA, Z, AD, CD, RCODE).
    public var flags: UInt16
    /// The question section.
    public var questions: [DNSQuestion]
    /// The answer section.
    public var answers: [DNSResourceRecord]
    /// The authority section (in mDNS probes: the records being probed for).
    public var authorities: [DNSResourceRecord]
    /// The additional section.
    public var additionals: [DNSResourceRecord]

    /// Creates a message.
    public init(
        id: UInt16 = 0,
        flags: UInt16 = 0,
        questions: [DNSQuestion] = [],
        answers: [DNSResourceRecord] = [],
        authorities: [DNSResourceRecord] = [],
        additionals: [DNSResourceRecord] = []
    ) {
        self.id = id
        self.flags = flags
        self.questions = questions
        self.answers = answers
        self.authorities = authorities
        self.additionals = additionals
    }

    /// Creates an mDNS query (QR clear).
    public static func query(_ questions: [DNSQuestion], knownAnswers: [DNSResourceRecord] = [], authorities: [DNSResourceRecord] = []) -> DNSMessage {
        DNSMessage(questions: questions, answers: knownAnswers, authorities: authorities)
    }

    /// Creates an mDNS response (QR and AA set, id 0).
    public static func response(answers: [DNSResourceRecord] = [], additionals: [DNSResourceRecord] = []) -> DNSMessage {
        DNSMessage(flags: responseFlag | authoritativeFlag, answers: answers, additionals: additionals)
    }

    /// Parses a message from its wire bytes. Trailing bytes after the last record are ignored.
    public init(bytes: [UInt8]) throws(DNSMessageError) {
        var decoder = DNSMessageDecoder(bytes: bytes)
        self = try decoder.readMessage()
    }

    /// Encodes the message with name compression.
    public func encoded() throws(DNSMessageError) -> [UInt8] {
        var encoder = DNSMessageEncoder(compress: true)
        try encoder.writeMessage(self)
        return encoder.bytes
    }

    /// Whether the QR bit is set (the message is a response).
    public var isResponse: Bool {
        get { flags & Self.responseFlag != 0 }
        set { flags = newValue ? flags | Self.responseFlag : flags & ~Self.responseFlag }
    }

    /// Whether the TC bit is set.
    public var isTruncated: Bool { flags & Self.truncatedFlag != 0 }

    /// The 4-bit opcode; mDNS only uses 0 (standard query).
    public var opcode: UInt8 { UInt8((flags >> 11) & 0x0F) }

    /// The 4-bit response code.
    public var responseCode: UInt8 { UInt8(flags & 0x000F) }

    /// All records of the answer, authority and additional sections, in that order.
    public var allRecords: [DNSResourceRecord] { answers + authorities + additionals }

    /// A multi-line rendering for logs.
    public var description: String {
        var lines = ["\(isResponse ? "response" : "query") id=\(id) flags=0x\(String(flags, radix: 16))"]
        lines += questions.map { "  Q  \($0)" }
        lines += answers.map { "  AN \($0)" }
        lines += authorities.map { "  NS \($0)" }
        lines += additionals.map { "  AR \($0)" }
        return lines.joined(separator: "\n")
    }
}
