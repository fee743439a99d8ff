import Foundation
import OpenGameKit
import Synchronization

/// The relay's CPU per forwarded packet, unreliable match data against voice: every member of a 4-player match
/// sends the same payload to the others at a steady rate, first as data (`sendData(toAllPlayers:with: .unreliable)`),
/// then as voice on a channel everyone listens to, with the CPU of the server's UDP threads and of the whole process
/// read before and after each phase.
enum VoiceRelayCost {
    /// One phase's counts and CPU.
    struct Phase {
        /// Messages or packets sent.
        var sent: Int
        /// Sends that threw.
        var refused: Int
        /// Arrivals at the other members (each a forwarded packet).
        var delivered: Int
        /// Seconds of sending.
        var elapsed: Double
        /// CPU seconds of the relay's UDP threads ("gamecenter UDP": they open, forward, seal and send every datagram).
        var relayCPU: Double
        /// CPU seconds of the process (`getrusage`) less the SDK's UDP receive threads and the sending thread.
        var processLessClientsCPU: Double

        /// CPU µs of the relay's UDP threads per forwarded packet.
        var relayMicrosecondsPerForwarded: Double { delivered > 0 ? relayCPU / Double(delivered) * 1e6 : 0 }
        /// CPU µs of the process less the clients per forwarded packet.
        var processMicrosecondsPerForwarded: Double { delivered > 0 ? processLessClientsCPU / Double(delivered) * 1e6 : 0 }
    }

    /// Counts the data messages a device receives.
    final class DataCounter: GKMatchDelegate, Sendable {
        /// Messages received so far.
        let count = Atomic<Int>(0)
        func match(_ match: GKMatch, didReceive data: Data, fromPlayer playerID: String) { count.add(1, ordering: .relaxed) }
        func match(_ match: GKMatch, player playerID: String, didChange state: GKPlayerConnectionState) {}
        func match(_ match: GKMatch, didFailWithError error: (any Error)?) {}
    }

    /// Runs the data phase, then the voice phase, on the one match of `quad`.
    static func measure(quad: VoiceMatches, payload: Data, hertz: Double, seconds: Double) async throws -> (data: Phase, voice: Phase) {
        let members = quad.matches[0]
        let counters = members.map { _ in DataCounter() }
        for (member, counter) in zip(members, counters) { member.delegate = counter }
        let data = await phase(
            senders: members.count, hertz: hertz, seconds: seconds, delivered: { counters.reduce(0) { $0 + $1.count.load(ordering: .relaxed) } }
        ) {
            try members[$0].sendData(toAllPlayers: payload, with: .unreliable)
        }
        for member in members { member.delegate = nil }

        let arrivals = VoiceArrivals()
        let observers = members.map(arrivals.observe)
        let voice = await phase(senders: members.count, hertz: hertz, seconds: seconds, delivered: { arrivals.count }) {
            try members[$0].voice.send(payload, on: VoiceMatches.channel)
        }
        for (member, observer) in zip(members, observers) { member.voice.stopObserving(observer) }
        return (data, voice)
    }

    private static func phase(
        senders: Int, hertz: Double, seconds: Double, delivered: () -> Int,
        send: @escaping @Sendable (Int) throws -> Void
    ) async -> Phase {
        let before = (
            relay: ThreadClock.seconds(named: "gamecenter UDP"), clients: ThreadClock.seconds(named: "OGK relay UDP"),
            process: ProcessCPU.seconds(), delivered: delivered()
        )
        let run = await PacedSender.run(senders: senders, hertz: hertz, seconds: seconds, send: send)
        // The last packets in flight arrive.
        try? await Task.sleep(for: .milliseconds(200))
        let relay = ThreadClock.seconds(named: "gamecenter UDP") - before.relay
        let clients = ThreadClock.seconds(named: "OGK relay UDP") - before.clients
        let process = ProcessCPU.seconds() - before.process
        return Phase(
            sent: run.sent, refused: run.refused, delivered: delivered() - before.delivered, elapsed: run.elapsed,
            relayCPU: relay, processLessClientsCPU: process - clients - run.cpu)
    }
}
