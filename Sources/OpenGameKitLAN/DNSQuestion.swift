/// An entry of a DNS message's question section.
public struct DNSQuestion: Hashable, Sendable, CustomStringConvertible {
    /// The name asked about.
    public var name: DNSName
    /// The type asked for (``DNSRecordType/any`` for all).
    public var type: DNSRecordType
    /// The question's class without the unicast-response bit (normally 1, `IN`).
    public var questionClass: UInt16
    /// The mDNS unicast-response ("QU") bit (RFC 6762 §5.4): the top bit of the class field.
    public var unicastResponse: Bool

    /// Creates a question.
    public init(name: DNSName, type: DNSRecordType, unicastResponse: Bool = false, questionClass: UInt16 = DNSResourceRecord.classIN) {
        self.name = name
        self.type = type
        self.unicastResponse = unicastResponse
        self.questionClass = questionClass
    }

    /// Whether a record with `name` and `type` answers this question (same name; same type or `ANY`).
    public func isAnswered(byName name: DNSName, type: DNSRecordType) -> Bool {
        self.name == name && (self.type == .any || self.type == type)
    }

    /// A one-line rendering such as `_game._tcp.local. PTR QU`.
    public var description: String {
        "\(name) \(type)\(unicastResponse ? " QU" : "")"
    }
}
