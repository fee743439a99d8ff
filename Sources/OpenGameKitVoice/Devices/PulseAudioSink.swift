import CPulseSimple

/// Plays mixed voice through PulseAudio (or PipeWire's pulse server) as 48 kHz stereo.
///
/// ``writeFrame(_:)`` blocks while the server's buffer (about 60 ms) is full, so call it from a playback
/// thread. Without a reachable server, or with an unknown device, the initializer throws
/// ``VoiceError/Code/deviceUnavailable``. Owns the connection, closed on deinit.
/// `@unchecked Sendable`: not thread-safe (a C connection): one owner at a time; it is Sendable only to move between threads.
public final class PulseAudioSink: VoiceAudioSink, @unchecked Sendable {
    private let stream: OpaquePointer

    /// Connects to `server` (nil: the default) and plays to `device` (nil: the default output).
    public init(applicationName: String = "OpenGameKit", server: String? = nil, device: String? = nil) throws(VoiceError) {
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: UInt32(VoiceFormat.sampleRate), channels: 2)
        let frameBytes = UInt32(VoiceFormat.stereoSamplesPerFrame * 2)
        var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: frameBytes * 3, prebuf: UInt32.max, minreq: frameBytes, fragsize: UInt32.max)
        var error: Int32 = 0
        guard let stream = pa_simple_new(server, applicationName, PA_STREAM_PLAYBACK, device, "voice chat", &spec, nil, &attr, &error) else {
            throw VoiceError(
                .deviceUnavailable,
                "no speakers: PulseAudio/PipeWire not reachable\(server.map { " at \($0)" } ?? "")\(device.map { " (device \($0))" } ?? ""): \(String(cString: pa_strerror(error)))"
            )
        }
        self.stream = stream
    }

    deinit {
        var error: Int32 = 0
        pa_simple_drain(stream, &error)
        pa_simple_free(stream)
    }

    /// Queues one 1,920-sample interleaved stereo frame for playback.
    public func writeFrame(_ frame: [Int16]) throws(VoiceError) {
        guard frame.count == VoiceFormat.stereoSamplesPerFrame else {
            throw VoiceError(
                .invalidArgument, "a stereo frame is \(VoiceFormat.stereoSamplesPerFrame) samples (20 ms at 48 kHz, interleaved), not \(frame.count)")
        }
        var error: Int32 = 0
        let status = frame.withUnsafeBytes { pa_simple_write(stream, $0.baseAddress, $0.count, &error) }
        guard status >= 0 else {
            throw VoiceError(.deviceUnavailable, "the speakers stopped: \(String(cString: pa_strerror(error)))")
        }
    }
}
