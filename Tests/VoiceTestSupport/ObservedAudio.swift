import OpenGameKitVoice
import Synchronization

/// A voice source that reads another and notes when that one has ended: a test waits until a speaker's whole input
/// has been read (the voice engine reads it in real time) instead of for its length on the clock.
public final class ObservedVoiceSource: VoiceAudioSource {
    private let source: any VoiceAudioSource
    private let ended = Atomic(false)

    /// Reads `source`.
    public init(_ source: any VoiceAudioSource) {
        self.source = source
    }

    /// Whether the source has reported its end.
    public var hasEnded: Bool { ended.load(ordering: .acquiring) }

    /// The source's next frame; an end is noted.
    public func readFrame() throws(VoiceError) -> VoiceFrameRead {
        let read = try source.readFrame()
        if read == .end { ended.store(true, ordering: .releasing) }
        return read
    }
}

/// A WAV file sink behind a lock that counts the frames it was given and can be closed while the voice engine still
/// plays into it (later frames are dropped): a test waits on the listener's own clock, its frame count, and closes
/// the file without racing the engine's thread.
public final class ObservedWAVSink: VoiceAudioSink {
    /// The file (nil once closed) and the frames written to it.
    private struct State {
        var file: WAVFileSink?
        var framesWritten = 0
    }

    private let state: Mutex<State>

    /// Creates (or truncates) the WAV file at `path`.
    public init(path: String) throws(VoiceError) {
        state = Mutex(State(file: try WAVFileSink(path: path)))
    }

    /// The frames written so far (20 ms each).
    public var framesWritten: Int { state.withLock { $0.framesWritten } }

    /// Writes one stereo frame to the file; dropped once the sink is closed.
    public func writeFrame(_ frame: [Int16]) throws(VoiceError) {
        try state.withLock { state throws(VoiceError) in
            guard let file = state.file else { return }
            try file.writeFrame(frame)
            state.framesWritten += 1
        }
    }

    /// Finishes the file (see `WAVFileSink.close()`); frames played after this are dropped.
    public func close() throws(VoiceError) {
        try state.withLock { state throws(VoiceError) in
            try state.file?.close()
            state.file = nil
        }
    }
}
