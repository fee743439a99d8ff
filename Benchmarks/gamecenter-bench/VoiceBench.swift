import ArgumentParser
import Foundation
import GameCenterProtocol
import Logging
import OpenGameKitVoice

/// `gamecenter-bench voice`: the voice pipelines against bare libopus, and voice through the relay against raw
/// loopback UDP and against unreliable match data, in the same run.
struct VoiceBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voice",
        abstract:
            "Voice pipeline CPU vs bare libopus, two-party call setup, mouth-to-ear and CPU, mouth-to-ear latency through the relay, relay CPU per voice packet vs data, 4-player voice matches per core.",
        discussion: """
            Anchors: libopus encoding and decoding the same espeak-ng speech with nothing around it (thread CPU time), \
            raw loopback UDP ping-pong and one-way packets. The server and every SDK device run in this one process, on \
            the same cores.
            """
    )

    @Option(help: "20 ms frames of speech run through the codec and the pipelines.") var frames = 3_000
    @Option(help: "Voice packets timed send → arrive through the relay (one per 20 ms).") var latencyPackets = 1_000
    @Option(help: "Packets each of the 4 members sends per second in the data and voice cost phases.") var costHertz = 100.0
    @Option(help: "Seconds of each cost phase.") var costSeconds = 10.0
    @Option(help: "20 ms frames of speech played in real time through the voice engines for the measured mouth-to-ear.") var engineFrames = 1_500
    @Option(help: "Two-party calls started one after the other to time the direct setup.") var callSetups = 50
    @Option(help: "4-player matches in the load run, everyone talking.") var matches = 20
    @Option(help: "Seconds of the load run.") var loadSeconds = 10.0
    @Option(help: "espeak-ng executable (Debian package espeak-ng).") var espeak = "/usr/bin/espeak-ng"
    @Option(help: "Database (default: a new SQLite file in a temporary folder).") var database: String?

    func validate() throws {
        guard frames >= 100, engineFrames >= 100, callSetups >= 1, latencyPackets >= 100, costHertz > 0, costHertz <= VoiceLimits.packetsPerSecond,
            costSeconds > 0,
            matches >= 1, loadSeconds > 0
        else {
            throw ValidationError(
                "need --frames ≥ 100, --engine-frames ≥ 100, --call-setups ≥ 1, --latency-packets ≥ 100, --cost-hertz 0…\(Int(VoiceLimits.packetsPerSecond)) (the relay's voice limit), --cost-seconds > 0, --matches ≥ 1, --load-seconds > 0"
            )
        }
    }

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        print("gamecenter-bench voice — \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-bench-voice-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let speech = try SpeechFrames.render(count: frames, into: folder, executable: espeak)
        let settings = VoiceSendPipeline.Configuration()

        print(
            "\n## Anchor: bare libopus, \(frames) frames of espeak-ng speech (48 kHz mono, 20 ms, \(settings.bitrate / 1000) kbit/s, VOIP, FEC for \(settings.expectedPacketLoss) % loss, DTX; thread CPU time)"
        )
        let opus = try OpusAnchor.measure(frames: speech, configuration: settings)
        print(
            String(
                format: "encode %.1f CPU µs per frame, decode %.1f CPU µs per packet (mean packet %.0f B)",
                opus.encodeMicroseconds, opus.decodeMicroseconds, opus.meanBytes))
        print("\n## Opus complexity (bare libopus, same speech): encode CPU against quality, the log-spectral distance of the decoded speech")
        for complexity in [10, 8, 6, 5, 3, 0] {
            var tried = settings
            tried.complexity = complexity
            let figures = try OpusAnchor.measure(frames: speech, configuration: tried)
            print(
                String(
                    format: "complexity %2d: encode %.1f CPU µs per frame (%.2f× complexity %d), spectral distance %.2f dB, mean packet %.0f B%@",
                    complexity, figures.encodeMicroseconds, figures.encodeMicroseconds / opus.encodeMicroseconds, settings.complexity,
                    figures.spectralDistanceDecibels, figures.meanBytes, complexity == settings.complexity ? " (the pipeline's setting)" : ""))
        }
        print("\n## Anchor: raw loopback UDP (blocking sockets)")
        let rawRTT = RawUDPPingPong.measure(roundTrips: 4_000)
        print(String(format: "100 B ping-pong RTT: p50 %.1f µs, p99 %.1f µs", rawRTT.p50 * 1e6, rawRTT.p99 * 1e6))
        let rawRate = RawSockets.udpRate(seconds: 2)
        print(
            String(
                format: "one-way 100 B: %.0f packets/s delivered, %.1f CPU µs each (sender and receiver)", rawRate.delivered,
                rawRate.cpuMicrosecondsPerDelivered))

        print("\n## Ours: the pipelines, CPU per 20 ms frame (thread CPU time, same speech)")
        let pipelines = try VoicePipelineCost.measure(frames: speech)
        let talkers = Double(VoicePipelineCost.talkers.count)
        let perStream = pipelines.receiveMicroseconds / talkers
        print(
            String(
                format:
                    "send, VoiceSendPipeline.process (preprocess + VAD + encode): %.1f µs = %.2f× bare encode (speech heard in %.0f %% of frames, a packet sent for %.0f %%)",
                pipelines.sendMicroseconds, pipelines.sendMicroseconds / opus.encodeMicroseconds, pipelines.speakingShare * 100, pipelines.packetShare * 100))
        print(
            String(
                format: "receive, VoiceReceivePipeline receive + tick (jitter buffer + decode), per stream: %.1f µs = %.2f× bare decode",
                perStream, perStream / opus.decodeMicroseconds))
        print(
            String(
                format: "VoiceMixer.mix of %d streams: %.1f µs per frame; receive side for %d talkers with the mix: %.1f µs = %.2f× %d bare decodes",
                Int(talkers), pipelines.mixMicroseconds, Int(talkers), pipelines.receiveMicroseconds + pipelines.mixMicroseconds,
                (pipelines.receiveMicroseconds + pipelines.mixMicroseconds) / (talkers * opus.decodeMicroseconds), Int(talkers)))
        let oneStream = pipelines.sendMicroseconds + perStream
        print(
            String(
                format: "one stream end to end (send + receive): %.1f µs per frame = %.2f× bare encode + decode, %.2f %% of a core",
                oneStream, oneStream / (opus.encodeMicroseconds + opus.decodeMicroseconds), oneStream / Double(VoiceFormat.frameMilliseconds * 1000) * 100))
        guard !pipelines.medianPacket.isEmpty else { throw ValidationError("the detector heard no speech in the espeak-ng output") }
        try await VoiceCallBench.report(speech: Array(speech.prefix(engineFrames)), setups: callSetups, opus: opus, rawRTT: rawRTT)

        let run = UUID().uuidString.prefix(8).lowercased()
        let bundleID = "com.example.voice\(run)"
        let manifest = """
            bundleID: \(bundleID)
            name: Voice bench
            matchmaking: { fillSeconds: 0 }
            """
        let server = try await BenchServer.start(manifest: manifest, database: database, logger: logger)
        do {
            try await relayParts(server: server, bundleID: bundleID, speech: speech, pipelines: pipelines, rawRTT: rawRTT, rawRate: rawRate)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    private func relayParts(
        server: BenchServer, bundleID: String, speech: [[Int16]], pipelines: VoicePipelineCost.Figures,
        rawRTT: RawUDPPingPong.Figures, rawRate: DatagramRate
    ) async throws {
        let packet = pipelines.medianPacket
        let payload = VoiceArrivals.stamped(packet)
        print(
            "\n## Ours: voice packets through the relay, 2 SDK devices, one \(payload.count) B voice packet (8 B send time + a median speech packet) per 20 ms")
        let pair = try await VoiceMatches.form(server: server, bundleID: bundleID, matches: 1, players: 2, tag: "pair")
        let latency = try await VoiceRelayLatency.measure(pair: pair, packet: packet, packets: latencyPackets)
        pair.disconnect()
        let rawOneWay = rawRTT.p50 / 2
        print(
            String(
                format: "send → arrive: p50 %.3f ms, p99 %.3f ms (%d of %d arrived); p50 %.1f× half the raw UDP RTT",
                latency.p50 * 1000, latency.p99 * 1000, latency.received, latency.sent, latency.p50 / rawOneWay))
        let lookahead = Double(pipelines.codecDelaySamples) / Double(VoiceFormat.sampleRate) * 1000
        print(
            String(
                format:
                    "what adds up to mouth-to-ear: half a frame to capture a sample's middle and half to play it (%d ms), the speexdsp preprocessor one block (%d ms), the encoder look-ahead %d samples (%.1f ms), the relay (above), then the wait for the listener's next playback tick (0–%d ms; the jitter buffer starts at %d frame)",
                VoiceFormat.frameMilliseconds, VoiceFormat.samplesPerProcessingBlock * 1000 / VoiceFormat.sampleRate, pipelines.codecDelaySamples, lookahead,
                VoiceFormat.frameMilliseconds,
                VoiceJitterBuffer.Configuration().initialDelay))

        let speechSeconds = Double(min(engineFrames, speech.count) * VoiceFormat.frameMilliseconds) / 1000
        print(
            "\n## Ours: mouth-to-ear measured through 4 voice engines (1 talker, 3 listeners), \(Int(speechSeconds)) s of speech in real time; device buffers excluded"
        )
        let engines = try await VoiceMatches.form(server: server, bundleID: bundleID, matches: 1, players: 4, tag: "engine")
        let heard = try await VoiceEngineLatency.measure(quad: engines, speech: Array(speech.prefix(engineFrames)))
        engines.disconnect()
        guard !heard.delays.isEmpty else { throw ValidationError("no listener's output followed the speech") }
        for (name, p) in [("p50", 0.5), ("p99", 0.99)] {
            let total = percentile(heard.delays, p) * 1000
            print(
                String(
                    format: "mouth-to-ear %@: %.1f ms (%d windows of %.0f s × 3 listeners, %d without speech to match); goal ≤ 60 ms with 20 ms frames: %@",
                    name, total, heard.delays.count / 3, VoiceEngineLatency.windowSeconds, heard.unmatchedWindows, total <= 60 ? "met" : "NOT met"))
        }
        print(
            "listeners' playback ticks after the talker's capture tick (modulo 20 ms; the engines' start times set it): "
                + heard.tickPhases.map { String(format: "%.1f ms", $0 * 1000) }.joined(separator: ", "))
        for (index, listener) in heard.jitter.enumerated() {
            let counters = listener.statistics
            print(
                "listener \(index + 1)'s jitter buffer at the end: delay \(listener.delay) frame(s); \(counters.received) packets, \(counters.late) late, \(counters.lost) lost, \(counters.stretched) stretched, \(counters.skipped) skipped"
            )
        }
        if heard.spreads.isEmpty {
            print("speaking/silent agreement: no transition reported by every listener (\(heard.unmatched) unmatched)")
        } else {
            print(
                String(
                    format:
                        "speaking/silent agreement between the 3 listeners: spread p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d transitions (%d not reported by all); goal ≤ 100 ms",
                    percentile(heard.spreads, 0.5) * 1000, percentile(heard.spreads, 0.99) * 1000, heard.spreads.max()! * 1000, heard.spreads.count,
                    heard.unmatched))
        }

        print(
            "\n## Ours: relay CPU per forwarded packet, 4 SDK devices in one match, each sending \(Int(costHertz))/s for \(costSeconds) s, \(payload.count) B payloads"
        )
        let quad = try await VoiceMatches.form(server: server, bundleID: bundleID, matches: 1, players: 4, tag: "quad")
        let cost = try await VoiceRelayCost.measure(quad: quad, payload: payload, hertz: costHertz, seconds: costSeconds)
        quad.disconnect()
        for (name, phase) in [("data, unreliable", cost.data), ("voice", cost.voice)] {
            print(
                String(
                    format:
                        "%@: %d sent (%d refused), %d delivered of %d expected; relay UDP threads %.2f CPU µs per forwarded packet = %.1f× raw UDP's %.1f; process less the SDK's UDP threads and the sending thread %.2f µs",
                    name, phase.sent, phase.refused, phase.delivered, phase.sent * 3, phase.relayMicrosecondsPerForwarded,
                    phase.relayMicrosecondsPerForwarded / rawRate.cpuMicrosecondsPerDelivered, rawRate.cpuMicrosecondsPerDelivered,
                    phase.processMicrosecondsPerForwarded))
        }
        print(
            String(
                format:
                    "voice / data per forwarded packet: %.2f× (relay UDP threads), %.2f× (process less clients; it also holds the server's and the SDK devices' event loops and timers)",
                cost.voice.relayMicrosecondsPerForwarded / cost.data.relayMicrosecondsPerForwarded,
                cost.voice.processMicrosecondsPerForwarded / cost.data.processMicrosecondsPerForwarded))

        print("\n## Ours: 4-player voice matches one server core carries, everyone talking")
        let frameMilliseconds = Double(VoiceFormat.frameMilliseconds)
        let perMatch = 4.0 * 1000 / frameMilliseconds * 3
        let matchCore = perMatch * cost.voice.relayMicrosecondsPerForwarded / 1e6
        print(
            String(
                format:
                    "extrapolated from the voice phase: 4 talkers × %.0f packets/s × 3 receivers = %.0f forwarded/s per match × %.2f µs = %.2f %% of a core → %.0f matches per core (relay UDP threads only)",
                1000 / frameMilliseconds, perMatch, cost.voice.relayMicrosecondsPerForwarded, matchCore * 100, 1 / matchCore))
        let load = try await VoiceMatches.form(server: server, bundleID: bundleID, matches: matches, players: 4, tag: "load")
        let figures = await VoiceRelayLoad.run(load: load, packet: packet, seconds: loadSeconds)
        load.disconnect()
        // The devices' leave requests reach the server before it stops.
        try await Task.sleep(for: .seconds(1))
        print(
            String(
                format:
                    "measured, %d matches × 4 SDK devices × %.0f packets/s for %.0f s: sent %.0f/s (%d refused), forwarded %.0f/s of %.0f expected, send → arrive p50 %.2f ms, p99 %.2f ms",
                matches, 1000 / frameMilliseconds, loadSeconds, figures.sentPerSecond, figures.refused, figures.deliveredPerSecond,
                figures.expectedPerSecond, figures.p50 * 1000, figures.p99 * 1000))
        print(
            String(
                format:
                    "relay UDP threads %.3f cores = %.1f %% of a core per match → %.0f matches per core; whole process %.2f cores, of which the SDK devices' UDP threads and the sending thread %.2f",
                figures.relayCores, figures.relayCores / Double(matches) * 100, Double(matches) / figures.relayCores,
                figures.processCores, figures.clientCores))
    }
}
