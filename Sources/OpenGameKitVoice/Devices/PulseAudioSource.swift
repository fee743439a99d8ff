import CPulseSimple

/// Captures the microphone through PulseAudio (or PipeWire's pulse server) as 48 kHz mono 20 ms frames.
///
/// ``readFrame()`` blocks until a frame has been recorded, so call it from a capture thread. Without a
/// reachable server, or with an unknown device, the initializer throws ``VoiceError/Code/deviceUnavailable``.
/// Owns the connection, closed on deinit.
/// `@unchecked Sendable`: not thread-safe (a C connection): one owner at a time; it is Sendable only to move between threads.
public final class PulseAudioSource: VoiceAudioSource, @unchecked Sendable {
    private let stream: OpaquePointer
    private var frame = [Int16](repeating: 0, count: VoiceFormat.samplesPerFrame)

    /// Connects to `server` (nil: the default) and records from `device` (nil: the default microphone).
    public init(applicationName: String = "OpenGameKit", server: String? = nil, device: String? = nil) throws(VoiceError) {
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: UInt32(VoiceFormat.sampleRate), channels: 1)
        let frameBytes = UInt32(VoiceFormat.samplesPerFrame * 2)
        var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max, fragsize: frameBytes)
        var error: Int32 = 0
        guard let stream = pa_simple_new(server, applicationName, PA_STREAM_RECORD, device, "voice chat", &spec, nil, &attr, &error) else {
            throw VoiceError(
                .deviceUnavailable,
                "no microphone: PulseAudio/PipeWire not reachable\(server.map { " at \($0)" } ?? "")\(device.map { " (device \($0))" } ?? ""): \(String(cString: pa_strerror(error)))"
            )
        }
        self.stream = stream
    }

    deinit { pa_simple_free(stream) }

    /// Blocks until the next 20 ms frame is recorded.
    public func readFrame() throws(VoiceError) -> VoiceFrameRead {
        var error: Int32 = 0
        let status = frame.withUnsafeMutableBytes { pa_simple_read(stream, $0.baseAddress, $0.count, &error) }
        guard status >= 0 else {
            throw VoiceError(.deviceUnavailable, "the microphone stopped: \(String(cString: pa_strerror(error)))")
        }
        return .frame(frame)
    }
}
