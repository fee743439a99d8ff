/// The result of asking a source for a frame.
public enum VoiceFrameRead: Sendable, Equatable {
    /// A 20 ms frame: 960 samples, 48 kHz mono.
    case frame([Int16])
    /// No full frame yet (a live source whose audio has not arrived); ask again next tick.
    case pending
    /// The input ended; no more frames will come.
    case end
}
