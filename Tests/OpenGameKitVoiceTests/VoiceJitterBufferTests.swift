import Testing
@testable import OpenGameKitVoice

@Suite struct VoiceJitterBufferTests {
    static func packet(_ sequence: UInt16, _ timestamp: UInt32, speaking: Bool = true) -> VoicePacket {
        try! VoicePacket(speaking: speaking, sequence: sequence, timestamp: timestamp, opus: [0xF8, UInt8(truncatingIfNeeded: timestamp)])
    }

    /// Summarises an output: "p<timestamp>", "m<next timestamp or ->", "s", "b".
    static func label(_ output: VoiceJitterBuffer.Output) -> String {
        switch output {
        case .packet(let p): "p\(p.timestamp)"
        case .missing(let next): "m\(next.map { "\($0.timestamp)" } ?? "-")"
        case .silence: "s"
        case .buffering: "b"
        }
    }

    /// A buffer that waits three frames before it plays, so the tests can show reordering within its delay.
    static func threeFrameBuffer() throws -> VoiceJitterBuffer {
        var configuration = VoiceJitterBuffer.Configuration()
        configuration.initialDelay = 3
        return try VoiceJitterBuffer(configuration)
    }

    /// Delivers `arrivals[tick]` then pops, once per tick.
    static func play(_ arrivals: [[VoicePacket]], buffer: inout VoiceJitterBuffer, extraTicks: Int = 4) -> [String] {
        (0..<arrivals.count + extraTicks).map { tick in
            if tick < arrivals.count { for p in arrivals[tick] { buffer.put(p) } }
            return label(buffer.pop())
        }
    }

    @Test func reordersPackets() throws {
        var buffer = try Self.threeFrameBuffer()
        let arrivals = [[Self.packet(0, 0)], [Self.packet(2, 2)], [Self.packet(1, 1)], [Self.packet(4, 4)], [Self.packet(3, 3)], [Self.packet(5, 5)]]
        let out = Self.play(arrivals, buffer: &buffer)
        #expect(out == ["b", "b", "p0", "p1", "p2", "p3", "p4", "p5", "m-", "m-"])
        #expect(buffer.statistics.late == 0 && buffer.statistics.duplicates == 0)
    }

    @Test func dropsDuplicates() throws {
        var buffer = try Self.threeFrameBuffer()
        let arrivals = [[Self.packet(0, 0), Self.packet(0, 0)], [Self.packet(1, 1)], [Self.packet(1, 1), Self.packet(2, 2)], [Self.packet(0, 0)]]
        let out = Self.play(arrivals, buffer: &buffer, extraTicks: 1)
        #expect(out == ["b", "b", "p0", "p1", "p2"])
        #expect(buffer.statistics.duplicates == 3, "two copies while buffered, one after frame 0 played")
        #expect(buffer.statistics.late == 0)
    }

    @Test func reportsLossWithTheNextPacketForFEC() throws {
        var buffer = try Self.threeFrameBuffer()
        let arrivals = [[Self.packet(0, 0)], [Self.packet(1, 1)], [], [Self.packet(3, 3)], [], [], [Self.packet(6, 6)]]
        let out = Self.play(arrivals, buffer: &buffer, extraTicks: 0)
        // Frame 2 is missing with packet 3 buffered (FEC); frames 4 and 5 are missing with packet 6 not yet there.
        #expect(out == ["b", "b", "p0", "p1", "m3", "p3", "m-"])
        #expect(buffer.statistics.lost == 2)
    }

    @Test func dropsLatePacketsAndGrowsItsDelay() throws {
        var buffer = try Self.threeFrameBuffer()
        #expect(buffer.delay == 3)
        var out: [String] = []
        for tick in 0..<6 {
            if tick != 3 { buffer.put(Self.packet(UInt16(tick), UInt32(tick))) }
            out.append(Self.label(buffer.pop()))
        }
        // Packet 3 turns up after its frame was concealed.
        #expect(buffer.put(Self.packet(3, 3)) == .late)
        out.append(Self.label(buffer.pop()))
        out.append(Self.label(buffer.pop()))
        // Frame 3 was concealed (with packet 4's FEC); then one more concealed frame stretches the delay.
        #expect(out == ["b", "b", "p0", "p1", "p2", "m4", "m-", "p4"])
        #expect(buffer.statistics.late == 1)
        #expect(buffer.statistics.stretched == 1)
        #expect(buffer.delay == 4)
    }

    @Test func tellsDTXSilenceFromLoss() throws {
        var buffer = try Self.threeFrameBuffer()
        // Sequence numbers run on (0, 1, 2) while timestamps jump from 1 to 5: frames 2–4 were not sent.
        let arrivals = [[Self.packet(0, 0)], [Self.packet(1, 1, speaking: false)], [], [], [], [Self.packet(2, 5)], [Self.packet(3, 6)]]
        let out = Self.play(arrivals, buffer: &buffer, extraTicks: 2)
        #expect(out == ["b", "b", "p0", "p1", "s", "s", "s", "p5", "p6"])
        #expect(buffer.statistics.lost == 0)
    }

    @Test func shrinksItsDelayInsideASilenceGap() throws {
        var configuration = VoiceJitterBuffer.Configuration()
        configuration.initialDelay = 3
        configuration.adaptationWindow = 10
        var buffer = try VoiceJitterBuffer(configuration)
        var out: [String] = []
        // Frames 0…19 each arrive on time, 2 frames ahead of their turn; then a DTX gap (20…29) before frame 30.
        for tick in 0..<32 {
            if tick < 20 { buffer.put(Self.packet(UInt16(tick), UInt32(tick), speaking: false)) }
            if tick == 30 { buffer.put(Self.packet(20, 30)) }
            out.append(Self.label(buffer.pop()))
        }
        #expect(buffer.delay == 2)
        #expect(buffer.statistics.skipped == 1)
        #expect(out.filter { $0 == "s" }.count == 9, "10 silent frames, one skipped: \(out)")
        #expect(out.last == "p30", "frame 30 should play one tick early, at tick 31: \(out)")
    }

    /// The default buffer plays a packet on the tick it arrives. A lost frame whose next packet is not there yet is
    /// concealed and raises the delay to two frames, so the next loss finds its next packet buffered (FEC).
    @Test func startsAtOneFrameAndMakesRoomForFECAfterALoss() throws {
        var buffer = try VoiceJitterBuffer()
        #expect(buffer.delay == 1)
        let lost: Set<Int> = [3, 7]
        let arrivals: [[VoicePacket]] = (0..<10).map { i in lost.contains(i) ? [] : [Self.packet(UInt16(i), UInt32(i))] }
        let out = Self.play(arrivals, buffer: &buffer, extraTicks: 1)
        #expect(out == ["p0", "p1", "p2", "m-", "m-", "p4", "p5", "p6", "m8", "p8", "p9"])
        #expect(buffer.delay == 2)
        #expect(buffer.statistics.lost == 2 && buffer.statistics.stretched == 1, "\(buffer.statistics)")
    }

    @Test func refusesARecoveryDelayOutsideItsRange() throws {
        var configuration = VoiceJitterBuffer.Configuration()
        configuration.recoveryDelay = 0
        #expect(throws: VoiceError.self) { try VoiceJitterBuffer(configuration) }
        configuration.recoveryDelay = configuration.maxDelay + 1
        #expect(throws: VoiceError.self) { try VoiceJitterBuffer(configuration) }
    }

    @Test func staysBoundedAndRestartsOnAJump() throws {
        var buffer = try Self.threeFrameBuffer()
        for i in 0..<200 { buffer.put(Self.packet(UInt16(i), UInt32(i))) }
        #expect(buffer.count == buffer.configuration.capacity)
        #expect(buffer.statistics.overflowed == 200 - buffer.configuration.capacity)
        for _ in 0..<3 { _ = buffer.pop() }
        #expect(buffer.put(Self.packet(9_000, 100_000)) == .restarted)
        #expect(buffer.count == 1)
        let out = (0..<4).map { _ in Self.label(buffer.pop()) }
        #expect(out == ["b", "b", "p100000", "m-"])
    }

    @Test func handlesWrappingTimestampsAndSequences() throws {
        var buffer = try Self.threeFrameBuffer()
        let start = UInt32.max - 1
        let arrivals = (0..<4).map { i in [Self.packet(UInt16.max &+ UInt16(i), start &+ UInt32(i))] }
        let out = Self.play(arrivals, buffer: &buffer, extraTicks: 2)
        #expect(out == ["b", "b", "p\(UInt32.max - 1)", "p\(UInt32.max)", "p0", "p1"])
    }

    /// A sender whose timestamps stopped while its microphone paused (an older build, or a restarted sender): its
    /// packets after the pause are later than any delay allowed, yet newer in sequence, so the stream starts again from
    /// the first of them and plays on the next tick; a stale copy of an old packet is still only late.
    @Test(arguments: [5, 75, 3_000])
    func aSenderWhoseClockPausedIsPlayedAgainAtOnce(pauseTicks: Int) throws {
        var buffer = try VoiceJitterBuffer()
        let before = (0..<10).map { [Self.packet(UInt16($0), UInt32($0))] }
        let pause = [[VoicePacket]](repeating: [], count: pauseTicks)
        let after = (10..<20).map { [Self.packet(UInt16($0), UInt32($0))] }
        let out = Self.play(before + pause + after, buffer: &buffer, extraTicks: 1)
        let resumed = Array(out.suffix(11))
        if pauseTicks <= buffer.configuration.maxDelay {
            // A short pause: its packets are late by less than the buffer may wait, so the buffer grows its delay,
            // a frame at a time, as for any late packet, and plays the rest of them.
            #expect(resumed.contains("p19"), "\(resumed)")
        } else {
            #expect(resumed == ["b"] + (10..<20).map { "p\($0)" }, "\(resumed)")
            #expect(buffer.statistics.late == 0)
        }
        let stale = buffer.put(Self.packet(3, 3))
        #expect(stale == .late || stale == .duplicate, "an old packet arriving now is dropped, not a restart: \(stale)")
    }
}
