/// Reads DNS wire format with strict bounds checks; every failure is a thrown ``DNSMessageError``.
///
/// Name compression pointers must point strictly before the start of the name segment that contains
/// them, which guarantees termination; chains are additionally capped at 128 jumps.
struct DNSMessageDecoder {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func readMessage() throws(DNSMessageError) -> DNSMessage {
        let id = try readUInt16("header")
        let flags = try readUInt16("header")
        let questionCount = Int(try readUInt16("header"))
        let answerCount = Int(try readUInt16("header"))
        let authorityCount = Int(try readUInt16("header"))
        let additionalCount = Int(try readUInt16("header"))
        var message = DNSMessage(id: id, flags: flags)
        // A question takes at least 5 bytes and a record at least 11, so cap reservations by the input size.
        message.questions.reserveCapacity(min(questionCount, bytes.count / 5))
        for _ in 0..<questionCount {
            message.questions.append(try readQuestion())
        }
        message.answers = try readRecords(count: answerCount)
        message.authorities = try readRecords(count: authorityCount)
        message.additionals = try readRecords(count: additionalCount)
        return message
    }

    mutating func readQuestion() throws(DNSMessageError) -> DNSQuestion {
        let name = try readName()
        let type = DNSRecordType(rawValue: try readUInt16("question type"))
        let rawClass = try readUInt16("question class")
        return DNSQuestion(name: name, type: type, unicastResponse: rawClass & 0x8000 != 0, questionClass: rawClass & 0x7FFF)
    }

    mutating func readRecords(count: Int) throws(DNSMessageError) -> [DNSResourceRecord] {
        var records: [DNSResourceRecord] = []
        records.reserveCapacity(min(count, bytes.count / 11))
        for _ in 0..<count {
            records.append(try readRecord())
        }
        return records
    }

    mutating func readRecord() throws(DNSMessageError) -> DNSResourceRecord {
        let name = try readName()
        let type = DNSRecordType(rawValue: try readUInt16("record type"))
        let rawClass = try readUInt16("record class")
        let ttl = try readUInt32("record TTL")
        let length = Int(try readUInt16("record data length"))
        guard length <= bytes.count - index else { throw .truncated("\(type) record data") }
        let end = index + length
        let data = try readRecordData(type: type, end: end)
        guard index == end else {
            throw .badRecordData(type: type, reason: "\(end - index) unread bytes of \(length)")
        }
        return DNSResourceRecord(name: name, data: data, ttl: ttl, cacheFlush: rawClass & 0x8000 != 0, recordClass: rawClass & 0x7FFF)
    }

    /// Reads record data that must end exactly at `end`.
    mutating func readRecordData(type: DNSRecordType, end: Int) throws(DNSMessageError) -> DNSRecordData {
        let length = end - index
        switch type {
        case .a:
            guard length == 4 else { throw .badRecordData(type: type, reason: "length \(length), expected 4") }
            let address = IPv4Address(bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3])
            index = end
            return .a(address)
        case .aaaa:
            guard length == 16, let address = IPv6Address(bytes: Array(bytes[index..<end])) else {
                throw .badRecordData(type: type, reason: "length \(length), expected 16")
            }
            index = end
            return .aaaa(address)
        case .ptr:
            let target = try readName(limit: end)
            return .ptr(target)
        case .srv:
            guard length >= 7 else { throw .badRecordData(type: type, reason: "length \(length) too short") }
            let priority = try readUInt16("SRV priority")
            let weight = try readUInt16("SRV weight")
            let port = try readUInt16("SRV port")
            let target = try readName(limit: end)
            return .srv(priority: priority, weight: weight, port: port, target: target)
        case .txt:
            // RFC 6763 §6.1: zero-length TXT data is read as the canonical single empty string.
            guard length > 0 else { return .txt(TXTRecord(strings: [[]])) }
            var strings: [[UInt8]] = []
            while index < end {
                let stringLength = Int(bytes[index])
                index += 1
                guard stringLength <= end - index else { throw .badRecordData(type: type, reason: "string overruns data") }
                strings.append(Array(bytes[index..<(index + stringLength)]))
                index += stringLength
            }
            return .txt(TXTRecord(strings: strings))
        case .nsec:
            let next = try readName(limit: end)
            var types: [DNSRecordType] = []
            var lastWindow = -1
            while index < end {
                guard end - index >= 2 else { throw .badRecordData(type: type, reason: "truncated type bitmap") }
                let window = Int(bytes[index])
                let bitmapLength = Int(bytes[index + 1])
                index += 2
                guard window > lastWindow else { throw .badRecordData(type: type, reason: "bitmap windows out of order") }
                guard (1...32).contains(bitmapLength), bitmapLength <= end - index else {
                    throw .badRecordData(type: type, reason: "bad bitmap length \(bitmapLength)")
                }
                lastWindow = window
                for offset in 0..<bitmapLength {
                    let byte = bytes[index + offset]
                    for bit in 0..<8 where byte & (0x80 >> UInt8(bit)) != 0 {
                        types.append(DNSRecordType(rawValue: UInt16(window << 8 | offset << 3 | bit)))
                    }
                }
                index += bitmapLength
            }
            return .nsec(nextName: next, types: types)
        default:
            let data = Array(bytes[index..<end])
            index = end
            return .unknown(type: type, data: data)
        }
    }

    /// Reads a possibly compressed name at the current index. The in-place part must end by `limit`.
    mutating func readName(limit: Int? = nil) throws(DNSMessageError) -> DNSName {
        let inPlaceLimit = min(limit ?? bytes.count, bytes.count)
        var labels: [String] = []
        var position = index
        var segmentStart = index
        var jumped = false
        var jumps = 0
        var encodedLength = 1
        while true {
            let bound = jumped ? bytes.count : inPlaceLimit
            guard position < bound else { throw .truncated("name") }
            let length = Int(bytes[position])
            switch length & 0xC0 {
            case 0x00:
                if length == 0 {
                    position += 1
                    if !jumped { index = position }
                    return DNSName(labels: labels)
                }
                guard length <= bound - position - 1 else { throw .truncated("name label") }
                encodedLength += length + 1
                guard encodedLength <= DNSName.maxEncodedLength else {
                    throw .invalidName("longer than \(DNSName.maxEncodedLength) bytes")
                }
                labels.append(String(decoding: bytes[(position + 1)...(position + length)], as: UTF8.self))
                position += length + 1
            case 0xC0:
                guard position + 1 < bound else { throw .truncated("compression pointer") }
                let target = (length & 0x3F) << 8 | Int(bytes[position + 1])
                guard target < segmentStart, jumps < 128 else { throw .badCompressionPointer(offset: position) }
                if !jumped {
                    index = position + 2
                    jumped = true
                }
                jumps += 1
                position = target
                segmentStart = target
            default:
                throw .unsupportedLabelType(offset: position)
            }
        }
    }

    mutating func readUInt16(_ what: String) throws(DNSMessageError) -> UInt16 {
        guard bytes.count - index >= 2 else { throw .truncated(what) }
        defer { index += 2 }
        return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    mutating func readUInt32(_ what: String) throws(DNSMessageError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw .truncated(what) }
        defer { index += 4 }
        return UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8 | UInt32(bytes[index + 3])
    }
}
