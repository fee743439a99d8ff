import Testing
@testable import OpenGameKitLAN
import NetworkFaultProxy

@Suite("DNSMessage fuzzing")
struct DNSMessageFuzzTests {
    static func corpus() throws -> [[UInt8]] {
        let instance: DNSName = "Alice._ogk._tcp.local."
        let messages: [DNSMessage] = [
            .query(
                [DNSQuestion(name: "_ogk._tcp.local.", type: .ptr, unicastResponse: true)],
                knownAnswers: [DNSResourceRecord(name: "_ogk._tcp.local.", data: .ptr(instance), ttl: 4000)]),
            .response(
                answers: [DNSResourceRecord(name: "_ogk._tcp.local.", data: .ptr(instance), ttl: 4500)],
                additionals: [
                    DNSResourceRecord(name: instance, data: .srv(priority: 0, weight: 0, port: 4000, target: "h.local."), ttl: 120, cacheFlush: true),
                    DNSResourceRecord(name: instance, data: .txt(TXTRecord(["peer": "p1", "v": "1"])), ttl: 4500, cacheFlush: true),
                    DNSResourceRecord(name: "h.local.", data: .a(IPv4Address(127, 0, 0, 1)), ttl: 120, cacheFlush: true),
                    DNSResourceRecord(name: "h.local.", data: .nsec(nextName: "h.local.", types: [.a]), ttl: 120, cacheFlush: true),
                ]),
            .query(
                [DNSQuestion(name: instance, type: .any)],
                authorities: [
                    DNSResourceRecord(name: instance, data: .srv(priority: 0, weight: 0, port: 1, target: "h.local."), ttl: 120),
                    DNSResourceRecord(name: "h.local.", data: .aaaa(IPv6Address(bytes: [UInt8](repeating: 7, count: 16))!), ttl: 120),
                    DNSResourceRecord(name: "u.local.", data: .unknown(type: DNSRecordType(rawValue: 5), data: [0xC0, 0x0C]), ttl: 1),
                ]),
        ]
        return try messages.map { try $0.encoded() } + [DNSMessageTests.queryBytes, DNSMessageTests.responseBytes]
    }

    static func mutate(_ input: [UInt8], using rng: inout SplitMix64) -> [UInt8] {
        var bytes = input
        let mutations = Int.random(in: 1...3, using: &rng)
        for _ in 0..<mutations {
            switch Int.random(in: 0..<7, using: &rng) {
            case 0 where !bytes.isEmpty:  // flip a bit
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                bytes[i] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
            case 1 where !bytes.isEmpty:  // random byte
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            case 2:  // insert bytes
                let i = Int.random(in: 0...bytes.count, using: &rng)
                bytes.insert(contentsOf: (0..<Int.random(in: 1...4, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: i)
            case 3 where !bytes.isEmpty:  // delete a range
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                bytes.removeSubrange(i..<min(bytes.count, i + Int.random(in: 1...4, using: &rng)))
            case 4:  // truncate
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng)))
            case 5 where bytes.count > 1:  // plant a compression pointer anywhere, possibly forward or looping
                let i = Int.random(in: 0..<(bytes.count - 1), using: &rng)
                bytes[i] = 0xC0 | UInt8.random(in: 0...0x3F, using: &rng) & 0x01
                bytes[i + 1] = UInt8.random(in: 0...255, using: &rng)
            case 6 where bytes.count > 12:  // inflate a header count
                let i = 4 + 2 * Int.random(in: 0..<4, using: &rng)
                bytes[i] = UInt8.random(in: 0...1, using: &rng)
                bytes[i + 1] = UInt8.random(in: 0...255, using: &rng)
            default:
                break
            }
        }
        return bytes
    }

    @Test func hundredThousandRandomAndMutatedBuffersNeverTrap() throws {
        let corpus = try Self.corpus()
        let seed = TestSeed(default: 0x6F67_6B5F_6C61_6E21)
        var rng = seed.generator
        let iterations = 100_000
        var parsed = 0, rejected = 0, reencoded = 0
        for iteration in 0..<iterations {
            let input: [UInt8]
            if iteration % 4 == 0 {
                // Pure random bytes, sometimes with a plausible header so parsing gets past it.
                var random = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                if iteration % 8 == 0, random.count >= 12 {
                    for i in stride(from: 4, to: 12, by: 2) { random[i] = 0; random[i + 1] = UInt8.random(in: 0...3, using: &rng) }
                }
                input = random
            } else {
                input = Self.mutate(corpus[Int.random(in: 0..<corpus.count, using: &rng)], using: &rng)
            }
            do {
                let message = try DNSMessage(bytes: input)
                parsed += 1
                // Whatever parses must either re-encode and re-parse to the same message, or fail cleanly.
                if let bytes = try? message.encoded() {
                    let again = try DNSMessage(bytes: bytes)
                    let unknownRecordsWithPointers = message.allRecords.contains { if case .unknown = $0.data { true } else { false } }
                    if !unknownRecordsWithPointers { #expect(again == message, "\(seed), iteration \(iteration)") }
                    reencoded += 1
                }
            } catch {
                rejected += 1
            }
        }
        #expect(parsed + rejected == iterations)
        #expect(parsed > 1_000, "mutations should leave many messages valid (\(seed))")
        #expect(rejected > 1_000, "mutations should break many messages (\(seed))")
        print("fuzz (\(seed)): \(parsed) parsed (\(reencoded) re-encoded), \(rejected) rejected")
    }
}
