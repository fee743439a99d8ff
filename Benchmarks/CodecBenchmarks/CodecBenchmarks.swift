import Benchmark
import Crypto
import GameCenterProtocol
import NIOCore
import OpenGameKitLAN

/// The wire codecs on one core: the relay's sealed datagram (against bare swift-crypto `ChaChaPoly`, its anchor)
/// and the mDNS message a session's discovery parses for every packet on the LAN.
///
/// Run with `OPENGAMEKIT_BENCHMARKS=1 swift package benchmark --target CodecBenchmarks`.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000
    )

    let key = RelayKey.random()
    let payload = ByteBuffer(bytes: (0..<200).map { UInt8(truncatingIfNeeded: $0) })
    Benchmark("RelayDatagram.seal.200B") { benchmark in
        var buffer = ByteBuffer()
        buffer.reserveCapacity(512)
        for counter in benchmark.scaledIterations {
            buffer.clear()
            RelayDatagram.seal(RelayDatagramHeader(kind: .clientData, connectionID: 7, counter: UInt64(counter)), body: payload, key: key, into: &buffer)
            blackHole(buffer.readableBytes)
        }
    }
    var sealed = ByteBuffer()
    RelayDatagram.seal(RelayDatagramHeader(kind: .serverData, connectionID: 7, counter: 1), body: payload, key: key, into: &sealed)
    Benchmark("RelayDatagram.open.200B") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try? RelayDatagram.open(sealed, key: key)) }
    }
    let anchorKey = SymmetricKey(data: key.bytes)
    let plaintext = Array(payload.readableBytesView)
    let header = [UInt8](repeating: 0x21, count: RelayDatagram.headerSize)
    Benchmark("Anchor.ChaChaPoly.seal.200B") { benchmark in
        for counter in benchmark.scaledIterations {
            var nonce = [UInt8](repeating: 0, count: 12)
            withUnsafeBytes(of: UInt64(counter).bigEndian) { nonce.replaceSubrange(4..<12, with: $0) }
            blackHole(try? ChaChaPoly.seal(plaintext, using: anchorKey, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: header))
        }
    }

    let announcement = DNSAnnouncement.sessionService()
    let announcementBytes = try! announcement.encoded()
    Benchmark("DNSMessage.decode.announcement") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try? DNSMessage(bytes: announcementBytes)) }
    }
    Benchmark("DNSMessage.encode.announcement") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try? announcement.encoded()) }
    }
}
