import OpenGameKitVoice

/// What the voice pipelines cost per 20 ms frame, in CPU time of the one thread that runs them: the send side
/// (preprocessing, voice activity detection, Opus encoding) over every frame of the speech, then the receive side
/// for three talkers (each sending those packets: jitter buffer and decoding per tick), then mixing the three.
enum VoicePipelineCost {
    /// CPU per frame of each side, and what the send side made of the speech.
    struct Figures {
        /// CPU µs per frame of `VoiceSendPipeline.process`.
        var sendMicroseconds: Double
        /// CPU µs per frame of `VoiceReceivePipeline.receive` of three talkers' packets plus one `tick`.
        var receiveMicroseconds: Double
        /// CPU µs per frame of `VoiceMixer.mix` of the three talkers.
        var mixMicroseconds: Double
        /// Share of frames that gave a packet (DTX sends none for most silent ones).
        var packetShare: Double
        /// Share of frames the detector heard as speech.
        var speakingShare: Double
        /// The encoder's look-ahead in 48 kHz samples.
        var codecDelaySamples: Int
        /// A packet of speech of the median size, as the sender puts it on the wire.
        var medianPacket: [UInt8]
    }

    /// The talkers the receive side hears (all sending the same packets).
    static let talkers = ["talker 1", "talker 2", "talker 3"]

    /// Runs `frames` through a send pipeline, its packets through a receive pipeline as three talkers, and mixes them.
    static func measure(frames: [[Int16]]) throws -> Figures {
        let sender = try VoiceSendPipeline()
        var packets: [VoicePacket?] = []
        packets.reserveCapacity(frames.count)
        var speaking = 0
        let sendStart = ThreadClock.seconds()
        for frame in frames {
            packets.append(try sender.process(frame))
            if sender.speaking { speaking += 1 }
        }
        let sendSeconds = ThreadClock.seconds() - sendStart

        let receiver = try VoiceReceivePipeline()
        var ticks: [[String: VoiceReceivePipeline.Frame]] = []
        ticks.reserveCapacity(frames.count)
        let receiveStart = ThreadClock.seconds()
        for packet in packets {
            if let packet {
                for talker in talkers { try receiver.receive(packet, from: talker) }
            }
            ticks.append(receiver.tick())
        }
        let receiveSeconds = ThreadClock.seconds() - receiveStart

        let mixer = VoiceMixer()
        let mixStart = ThreadClock.seconds()
        for tick in ticks { _ = try mixer.mix(tick.mapValues(\.samples)) }
        let mixSeconds = ThreadClock.seconds() - mixStart

        let spoken = packets.compactMap { $0 }.filter(\.speaking).sorted { $0.bytes.count < $1.bytes.count }
        let count = Double(frames.count)
        return Figures(
            sendMicroseconds: sendSeconds / count * 1e6, receiveMicroseconds: receiveSeconds / count * 1e6,
            mixMicroseconds: mixSeconds / count * 1e6, packetShare: Double(packets.compactMap { $0 }.count) / count,
            speakingShare: Double(speaking) / count, codecDelaySamples: sender.codecDelay,
            medianPacket: spoken.isEmpty ? [] : spoken[spoken.count / 2].bytes)
    }
}
