import Foundation

/// Writes Opus packets of 20 ms mono frames as an Ogg Opus file (RFC 7845), so opus-tools can check our stream.
struct OggOpusWriter {
    private(set) var bytes: [UInt8] = []
    private let serial: UInt32 = 0x4F47_4B56
    private var pageSequence: UInt32 = 0
    private let preSkip: Int
    private var granule: Int64

    /// Starts a stream with the identification (OpusHead) and comment (OpusTags) headers.
    init(preSkip: Int) {
        self.preSkip = preSkip
        granule = Int64(preSkip)
        var head = Array("OpusHead".utf8)
        head += [1, 1] + le(UInt16(preSkip)) + le(UInt32(48_000)) + le(UInt16(0)) + [0]
        appendPage([head], granule: 0, flags: 0x02)
        let vendor = Array("OpenGameKitVoice tests".utf8)
        appendPage([Array("OpusTags".utf8) + le(UInt32(vendor.count)) + vendor + le(UInt32(0))], granule: 0, flags: 0)
    }

    /// Appends the packets of consecutive 20 ms frames as one page; `last` marks the end of the stream.
    mutating func append(_ packets: [[UInt8]], last: Bool) {
        granule += Int64(packets.count * 960)
        appendPage(packets, granule: granule, flags: last ? 0x04 : 0)
    }

    private mutating func appendPage(_ packets: [[UInt8]], granule: Int64, flags: UInt8) {
        var lacing: [UInt8] = []
        for packet in packets {
            lacing += [UInt8](repeating: 255, count: packet.count / 255) + [UInt8(packet.count % 255)]
        }
        precondition(lacing.count <= 255, "too many packets for one Ogg page")
        var page = Array("OggS".utf8) + [0, flags]
        page += le(UInt64(bitPattern: granule)) + le(serial) + le(pageSequence) + [0, 0, 0, 0]
        page += [UInt8(lacing.count)] + lacing
        for packet in packets { page += packet }
        let crc = Self.crc(page)
        page.replaceSubrange(22..<26, with: le(crc))
        bytes += page
        pageSequence += 1
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, MSB first, initial 0, no final xor, over the page with its CRC field zeroed.
    static func crc(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for byte in data {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }

    private func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] {
        (0..<MemoryLayout<T>.size).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }
    }
}
