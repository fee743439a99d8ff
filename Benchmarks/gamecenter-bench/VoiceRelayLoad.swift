import Foundation
import OpenGameKit
import OpenGameKitVoice

/// Every member of every match talking at once: each device sends one voice packet per 20 ms frame to its match's
/// channel, which everyone listens to, for `seconds`; the CPU of the relay's UDP threads and of the process is read
/// before and after, and every arrival's send → arrive time is recorded.
enum VoiceRelayLoad {
    /// Rates, latency and CPU of the load run.
    struct Figures {
        /// Voice packets sent per second, all devices.
        var sentPerSecond: Double
        /// Voice packets heard per second, all devices.
        var deliveredPerSecond: Double
        /// Packets that would be heard per second with none lost: each sent one by every other member.
        var expectedPerSecond: Double
        /// Sends that threw.
        var refused: Int
        /// Median send → arrive, seconds.
        var p50: Double
        /// 99th percentile send → arrive, seconds.
        var p99: Double
        /// Cores used by the relay's UDP threads.
        var relayCores: Double
        /// Cores used by the whole process (server, SDK devices, sending thread).
        var processCores: Double
        /// Cores used by the SDK devices' UDP receive threads and the sending thread.
        var clientCores: Double
    }

    /// Every member of `load` sends a stamped copy of `packet` every 20 ms for `seconds`.
    static func run(load: VoiceMatches, packet: [UInt8], seconds: Double) async -> Figures {
        let members = Array(load.matches.joined())
        let arrivals = VoiceArrivals()
        let observers = members.map(arrivals.observe)
        let relayBefore = ThreadClock.seconds(named: "gamecenter UDP"), clientsBefore = ThreadClock.seconds(named: "OGK relay UDP")
        let processBefore = ProcessCPU.seconds()
        let frameHertz = 1000 / Double(VoiceFormat.frameMilliseconds)
        let sending = await PacedSender.run(senders: members.count, hertz: frameHertz, seconds: seconds) {
            try members[$0].voice.send(VoiceArrivals.stamped(packet), on: VoiceMatches.channel)
        }
        let relay = ThreadClock.seconds(named: "gamecenter UDP") - relayBefore, clients = ThreadClock.seconds(named: "OGK relay UDP") - clientsBefore
        let process = ProcessCPU.seconds() - processBefore
        try? await Task.sleep(for: .milliseconds(200))
        for (member, observer) in zip(members, observers) { member.voice.stopObserving(observer) }
        let samples = arrivals.sorted
        let elapsed = sending.elapsed
        let receivers = Double(load.matches[0].count - 1)
        return Figures(
            sentPerSecond: Double(sending.sent) / elapsed, deliveredPerSecond: Double(samples.count) / elapsed,
            expectedPerSecond: Double(sending.sent) * receivers / elapsed, refused: sending.refused,
            p50: percentile(samples, 0.5), p99: percentile(samples, 0.99), relayCores: relay / elapsed,
            processCores: process / elapsed, clientCores: (clients + sending.cpu) / elapsed)
    }
}
