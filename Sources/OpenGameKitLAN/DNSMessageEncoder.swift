/// Writes DNS wire format, optionally compressing names (RFC 1035 §4.1.4).
///
/// Names are compressed in questions, record owner names and the targets of PTR and SRV records
/// (RFC 6762 §18.14). The NSEC next-name is written uncompressed for the widest compatibility.
struct DNSMessageEncoder {
    private(set) var bytes: [UInt8] = []
    let compress: Bool
    /// Offsets of previously written name suffixes, keyed by their labels' exact bytes (not their strings: `String` equality
    /// would take "é" and "e" + U+0301 for the same label, and point one name at the other's bytes).
    private var suffixOffsets: [[[UInt8]]: Int] = [:]

    init(compress: Bool) {
        self.compress = compress
    }

    mutating func writeMessage(_ message: DNSMessage) throws(DNSMessageError) {
        let counts = [message.questions.count, message.answers.count, message.authorities.count, message.additionals.count]
        for count in counts where count > Int(UInt16.max) {
            throw .invalidName("section with \(count) entries exceeds 65535")
        }
        writeUInt16(message.id)
        writeUInt16(message.flags)
        for count in counts { writeUInt16(UInt16(count)) }
        for question in message.questions {
            try writeName(question.name)
            writeUInt16(question.type.rawValue)
            writeUInt16((question.questionClass & 0x7FFF) | (question.unicastResponse ? 0x8000 : 0))
        }
        for record in message.answers + message.authorities + message.additionals {
            try writeRecord(record)
        }
    }

    mutating func writeRecord(_ record: DNSResourceRecord) throws(DNSMessageError) {
        try writeName(record.name)
        writeUInt16(record.type.rawValue)
        writeUInt16((record.recordClass & 0x7FFF) | (record.cacheFlush ? 0x8000 : 0))
        writeUInt32(record.ttl)
        let lengthOffset = bytes.count
        writeUInt16(0)
        try writeRecordData(record.data)
        let length = bytes.count - lengthOffset - 2
        guard length <= Int(UInt16.max) else {
            throw .badRecordData(type: record.type, reason: "\(length) bytes exceed 65535")
        }
        bytes[lengthOffset] = UInt8(length >> 8)
        bytes[lengthOffset + 1] = UInt8(length & 0xFF)
    }

    mutating func writeRecordData(_ data: DNSRecordData) throws(DNSMessageError) {
        switch data {
        case .a(let address):
            bytes += address.byteArray
        case .aaaa(let address):
            bytes += address.bytes
        case .ptr(let target):
            try writeName(target)
        case .srv(let priority, let weight, let port, let target):
            writeUInt16(priority)
            writeUInt16(weight)
            writeUInt16(port)
            try writeName(target)
        case .txt(let txt):
            if txt.strings.isEmpty {
                // RFC 6763 §6.1: an empty TXT record is a single empty string.
                bytes.append(0)
            }
            for string in txt.strings {
                guard string.count <= 255 else { throw .txtStringTooLong(string.count) }
                bytes.append(UInt8(string.count))
                bytes += string
            }
        case .nsec(let next, let types):
            try writeName(next, allowCompression: false)
            var windows: [Int: [UInt8]] = [:]
            for type in types {
                let window = Int(type.rawValue >> 8)
                let low = Int(type.rawValue & 0xFF)
                var bitmap = windows[window] ?? []
                if bitmap.count <= low / 8 { bitmap += [UInt8](repeating: 0, count: low / 8 + 1 - bitmap.count) }
                bitmap[low / 8] |= 0x80 >> UInt8(low % 8)
                windows[window] = bitmap
            }
            for window in windows.keys.sorted() {
                let bitmap = windows[window] ?? []
                bytes.append(UInt8(window))
                bytes.append(UInt8(bitmap.count))
                bytes += bitmap
            }
        case .unknown(_, let data):
            bytes += data
        }
    }

    mutating func writeName(_ name: DNSName, allowCompression: Bool = true) throws(DNSMessageError) {
        try name.validate()
        let labels = name.labels.map { Array($0.utf8) }
        for start in labels.indices {
            let suffix = Array(labels[start...])
            if compress, allowCompression, let offset = suffixOffsets[suffix] {
                writeUInt16(0xC000 | UInt16(offset))
                return
            }
            if compress, bytes.count < 0x3FFF, suffixOffsets[suffix] == nil {
                suffixOffsets[suffix] = bytes.count
            }
            bytes.append(UInt8(labels[start].count))
            bytes += labels[start]
        }
        bytes.append(0)
    }

    mutating func writeUInt16(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    mutating func writeUInt32(_ value: UInt32) {
        writeUInt16(UInt16(value >> 16))
        writeUInt16(UInt16(value & 0xFFFF))
    }
}
