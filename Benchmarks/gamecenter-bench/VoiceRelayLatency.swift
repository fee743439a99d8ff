import Foundation
import GameCenterProtocol
import OpenGameKit
import OpenGameKitVoice

/// Send → arrive of voice packets between two SDK devices through the relay, at one packet per 20 ms frame: the
/// sender in the channel (`.joined`), the receiver listening; each payload starts with its send time.
enum VoiceRelayLatency {
    /// Send → arrive quantiles in seconds, and the packets sent and heard.
    struct Figures {
        /// Median send → arrive, seconds.
        var p50: Double
        /// 99th percentile send → arrive, seconds.
        var p99: Double
        /// Packets sent.
        var sent: Int
        /// Packets heard.
        var received: Int
    }

    /// Sends `packets` stamped copies of `packet` from the first member of `pair` to the second.
    static func measure(pair: VoiceMatches, packet: [UInt8], packets: Int) async throws -> Figures {
        let sender = pair.matches[0][0], receiver = pair.matches[0][1]
        try sender.voice.setChannel(VoiceMatches.channel, .joined)
        try await pair.waitUntil { match in match === sender || match.voice.members(of: VoiceMatches.channel)[sender.voice.localPlayerID] == .joined }
        let arrivals = VoiceArrivals()
        let observer = arrivals.observe(receiver)
        let frameHertz = 1000 / Double(VoiceFormat.frameMilliseconds)
        let run = await PacedSender.run(senders: 1, hertz: frameHertz, seconds: Double(packets) / frameHertz) { _ in
            try sender.voice.send(VoiceArrivals.stamped(packet), on: VoiceMatches.channel)
        }
        try await Task.sleep(for: .milliseconds(200))
        receiver.voice.stopObserving(observer)
        let samples = arrivals.sorted
        return Figures(p50: percentile(samples, 0.5), p99: percentile(samples, 0.99), sent: run.sent, received: samples.count)
    }
}
