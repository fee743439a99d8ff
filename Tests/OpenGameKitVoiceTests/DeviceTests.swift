import Foundation
import Synchronization
import Testing
@testable import OpenGameKitVoice
import VoiceTestSupport

@Suite struct DeviceTests {
    static func wav(rate: Int, channels: Int, samples: [Int16], dataSize: UInt32? = nil) -> [UInt8] {
        TestAudio.wav(rate: rate, channels: channels, samples: samples, dataSize: dataSize)
    }

    @Test func readsStereo44100FromAPipeAsMono48k() throws {
        // 0.5 s of a 1 kHz tone on the left, silence on the right, with an unknown (streaming) data size.
        let tone = (0..<22_050).map { Int16(16_000 * sin(2 * Double.pi * 1_000 * Double($0) / 44_100)) }
        let interleaved: [Int16] = tone.flatMap { [$0, Int16(0)] }
        let pipe = Pipe()
        let bytes = Self.wav(rate: 44_100, channels: 2, samples: interleaved, dataSize: 0xFFFF_FFFF)
        let writer = Thread {
            pipe.fileHandleForWriting.write(Data(bytes)); try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        let source = try WAVFileSource(handle: pipe.fileHandleForReading)
        #expect(source.fileSampleRate == 44_100 && source.fileChannels == 2)
        let mono = try TestAudio.readAll(source)
        #expect(abs(mono.count - 24_000) <= 960, "\(mono.count) samples for 0.5 s")
        let middle = Array(mono[4_800..<19_200])
        let crossings = zip(middle, middle.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        #expect(abs(crossings - 300) <= 2, "\(crossings) cycles in 0.3 s of 1 kHz")
        let peak = middle.map { abs(Int($0)) }.max()!
        #expect(abs(peak - 8_000) < 400, "the downmix halves a one-sided tone: peak \(peak)")
        #expect(throws: VoiceError.self) { try WAVFileSource(handle: Pipe().fileHandleForReading, loop: true) }
    }

    @Test func loopsAFileAndRejectsOtherFormats() throws {
        let path = TestAudio.temporaryPath("loop.wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(Self.wav(rate: 48_000, channels: 1, samples: (0..<1_000).map { Int16($0) })).write(to: URL(fileURLWithPath: path))
        let source = try WAVFileSource(path: path, loop: true)
        var samples: [Int16] = []
        for _ in 0..<3 { if case .frame(let f) = try source.readFrame() { samples += f } }
        #expect(Array(samples[995..<1_005]) == [995, 996, 997, 998, 999, 0, 1, 2, 3, 4])
        let once = try WAVFileSource(path: path)
        #expect(try once.readFrame() != .end)
        guard case .frame(let last) = try once.readFrame() else { Issue.record("no second frame"); return }
        #expect(last[39] == 999 && last[40] == 0, "the last frame is padded with silence")
        #expect(try once.readFrame() == .end)

        var float = Self.wav(rate: 48_000, channels: 1, samples: [1, 2])
        float[20] = 3
        try Data(float).write(to: URL(fileURLWithPath: path))
        #expect { try WAVFileSource(path: path) } throws: { ($0 as? VoiceError)?.message.contains("only PCM (1) with 16-bit") == true }
        try Data("not a wave file at all".utf8).write(to: URL(fileURLWithPath: path))
        #expect { try WAVFileSource(path: path) } throws: { ($0 as? VoiceError)?.code == .unsupportedFormat }
    }

    @Test func sinkFixesSizesOnAFileAndStreamsOnAPipe() throws {
        let path = TestAudio.temporaryPath("sink.wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let frame = (0..<1_920).map { Int16($0 % 2 == 0 ? $0 : -$0) }
        let sink = try WAVFileSink(path: path)
        for _ in 0..<3 { try sink.writeFrame(frame) }
        #expect(throws: VoiceError.self) { try sink.writeFrame([0]) }
        try sink.close()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let dataSize = 3 * 1_920 * 2
        #expect(bytes.count == 44 + dataSize)
        #expect(Array(bytes[4..<8]) == [UInt8(truncatingIfNeeded: dataSize + 36), UInt8(truncatingIfNeeded: (dataSize + 36) >> 8), 0, 0])
        #expect(Array(bytes[40..<44]) == [UInt8(truncatingIfNeeded: dataSize), UInt8(truncatingIfNeeded: dataSize >> 8), 0, 0])
        let back = try WAVFileSource(path: path)
        #expect(back.fileChannels == 2 && back.fileSampleRate == 48_000)

        let pipe = Pipe()
        let piped = try WAVFileSink(handle: pipe.fileHandleForWriting)
        try piped.writeFrame(frame)
        try piped.close()
        try pipe.fileHandleForWriting.close()
        let streamed = [UInt8](pipe.fileHandleForReading.readDataToEndOfFile())
        #expect(streamed.count == 44 + 1_920 * 2)
        #expect(Array(streamed[4..<8]) == [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(Array(streamed[40..<44]) == [0xFF, 0xFF, 0xFF, 0xFF])
    }

    @Test func pushSourceDropsTheOldestWhenFull() throws {
        let source = try PCMPushSource(capacityFrames: 2)
        #expect(try source.readFrame() == .pending)
        source.push((0..<1_000).map { Int16($0) })
        source.push((1_000..<2_500).map { Int16($0 % 30_000) })
        #expect(source.droppedSamples == 2_500 - 1_920)
        guard case .frame(let first) = try source.readFrame(), case .frame(let second) = try source.readFrame() else {
            Issue.record("no frames"); return
        }
        #expect(first.first == 580, "the oldest 580 samples were dropped")
        #expect(second.first == 1_540 && second.last == 2_499)
        #expect(try source.readFrame() == .pending)
        source.push([Int16](repeating: 7, count: 100))
        #expect(try source.readFrame() == .pending)
        source.finish()
        guard case .frame(let last) = try source.readFrame() else { Issue.record("no final frame"); return }
        #expect(last[99] == 7 && last[100] == 0, "the final partial frame is padded with silence")
        #expect(try source.readFrame() == .end)
    }

    @Test func pullSinkPadsUnderrunsAndDropsOverflow() throws {
        let sink = try PCMPullSink(capacityFrames: 1)
        let a = [Int16](repeating: 1, count: 1_920), b = [Int16](repeating: 2, count: 1_920)
        try sink.writeFrame(a)
        try sink.writeFrame(b)
        #expect(sink.droppedSamples == 1_920)
        var buffer = [Int16](repeating: 9, count: 2_000)
        let got = buffer.withUnsafeMutableBufferPointer { sink.pull(into: $0) }
        #expect(got == 1_920)
        #expect(buffer[0] == 2 && buffer[1_919] == 2 && buffer[1_920] == 0 && buffer[1_999] == 0)
        #expect(sink.underrunSamples == 80)
    }

    /// Real PulseAudio: espeak speech played through `PulseAudioSink` into a null sink comes back through
    /// `PulseAudioSource` recording that sink's monitor, in real time, on the server's clock.
    @Test(.enabled(if: PrivatePulseAudio.isInstalled && TestAudio.hasEspeak, "needs pulseaudio and espeak-ng (the test script installs them)"))
    func speechPlayedThroughPulseAudioIsRecordedBackFromItsMonitor() throws {
        let pulse = try PrivatePulseAudio()
        defer { pulse.stop() }
        let speech = try TestAudio.speak("Testing the speakers and the microphone through a real PulseAudio server.")
        let input = try TestAudio.readAll(try WAVFileSource(path: speech))
        let sink = try PulseAudioSink(server: pulse.server, device: PrivatePulseAudio.sinkName)
        let source = try PulseAudioSource(server: pulse.server, device: PrivatePulseAudio.sinkName + ".monitor")
        // Recording runs on its own thread while this one plays; half a second of silence before and after.
        let frames = input.count / VoiceFormat.samplesPerFrame + 50
        let recorded = Mutex<[Int16]>([])
        let recording = Thread {
            for _ in 0..<frames {
                guard case .frame(let frame) = try? source.readFrame() else { return }
                recorded.withLock { $0 += frame }
            }
        }
        recording.start()
        let silence = [Int16](repeating: 0, count: VoiceFormat.stereoSamplesPerFrame)
        for _ in 0..<25 { try sink.writeFrame(silence) }
        for start in stride(from: 0, to: input.count - VoiceFormat.samplesPerFrame + 1, by: VoiceFormat.samplesPerFrame) {
            let mono = input[start..<start + VoiceFormat.samplesPerFrame]
            try sink.writeFrame(mono.flatMap { [$0, $0] })
        }
        for _ in 0..<25 { try sink.writeFrame(silence) }
        let deadline = Date().addingTimeInterval(Double(frames) * 0.02 + 10)
        while recorded.withLock({ $0.count }) < frames * VoiceFormat.samplesPerFrame, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let output = recorded.withLock { $0 }
        #expect(output.count == frames * VoiceFormat.samplesPerFrame, "recorded \(output.count) samples of \(frames * VoiceFormat.samplesPerFrame)")
        let similarity = TestAudio.similarity(input: input, output: output, maxDelay: 48_000)
        print("PulseAudio loop: envelope \(similarity.envelope), waveform \(similarity.waveform), delay \(similarity.delay) samples")
        #expect(similarity.envelope >= 0.9, "the monitor's recording does not follow what was played (envelope \(similarity.envelope))")
        #expect(similarity.waveform >= 0.9, "the monitor's recording is not the same waveform (\(similarity.waveform))")
    }

    @Test(.enabled(if: PrivatePulseAudio.isInstalled, "needs pulseaudio (the test script installs it)"))
    func anUnknownPulseAudioDeviceIsRefusedByName() throws {
        let pulse = try PrivatePulseAudio()
        defer { pulse.stop() }
        #expect { try PulseAudioSource(server: pulse.server, device: "no_such_microphone") } throws: { error in
            guard let error = error as? VoiceError else { return false }
            return error.code == .deviceUnavailable && error.message.contains("no_such_microphone")
        }
        #expect { try PulseAudioSink(server: pulse.server, device: "no_such_speakers") } throws: { error in
            guard let error = error as? VoiceError else { return false }
            return error.code == .deviceUnavailable && error.message.contains("no_such_speakers")
        }
    }

    @Test func pulseAudioWithoutAServerThrowsAClearError() {
        let server = "unix:/nonexistent/ogk-\(UUID().uuidString)"
        #expect { try PulseAudioSource(server: server) } throws: { error in
            guard let error = error as? VoiceError else { return false }
            print("PulseAudioSource: \(error.message)")
            return error.code == .deviceUnavailable && error.message.hasPrefix("no microphone: PulseAudio/PipeWire not reachable")
        }
        #expect { try PulseAudioSink(server: server) } throws: { error in
            (error as? VoiceError)?.code == .deviceUnavailable && (error as? VoiceError)?.message.hasPrefix("no speakers") == true
        }
    }
}
