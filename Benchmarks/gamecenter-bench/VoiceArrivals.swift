import Foundation
import OpenGameKit
import Synchronization

/// The voice packets SDK devices hear: how many, and each one's send → arrive time, from the send time its payload
/// starts with (8 bytes, big-endian nanoseconds of `Monotonic`).
final class VoiceArrivals: Sendable {
    private let latencies = Mutex<[Double]>([])

    /// Records every voice packet `match` hears until `stop(_:)` with the returned id.
    func observe(_ match: GKMatch) -> Int {
        match.voice.observe { [self] event in
            guard case .packet(_, let payload, _) = event, payload.count >= 8 else { return }
            let now = Monotonic.nanoseconds()
            let sent = payload.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            latencies.withLock { $0.append(Double(now &- sent) / 1e9) }
        }
    }

    /// Packets heard so far.
    var count: Int { latencies.withLock { $0.count } }

    /// Every send → arrive time so far in seconds, sorted.
    var sorted: [Double] { latencies.withLock { $0 }.sorted() }

    /// `packet` behind 8 bytes of the monotonic clock now.
    static func stamped(_ packet: [UInt8]) -> Data {
        var data = Data(count: 8)
        let now = Monotonic.nanoseconds()
        for i in 0..<8 { data[i] = UInt8(truncatingIfNeeded: now >> (56 - 8 * UInt64(i))) }
        data.append(contentsOf: packet)
        return data
    }
}
