/// The result of asking a source for a frame.
public enum VoiceFrameRead: Sendable, Equatable {
    /// A 20 ms frame: 960 samples, 48 kHz mono.
    case frame([Int16])
    /// No full frame yet (a live source whose audio has not arrived); ask again next tick.
    case pending
    /// The input ended; no more frames will come.
    case end
}

/// Where captured speech comes from: pulls 20 ms frames of 48 kHz mono Int16.
public protocol VoiceAudioSource: AnyObject {
    /// The next frame, ``VoiceFrameRead/pending`` if none is ready, or ``VoiceFrameRead/end`` when the input is over.
    func readFrame() throws(VoiceError) -> VoiceFrameRead
}

/// Where mixed voice goes: takes 20 ms frames of 48 kHz interleaved stereo Int16 (1,920 samples, left first).
public protocol VoiceAudioSink: AnyObject {
    /// Plays or stores one frame; a frame of the wrong length throws.
    func writeFrame(_ frame: [Int16]) throws(VoiceError)
}
