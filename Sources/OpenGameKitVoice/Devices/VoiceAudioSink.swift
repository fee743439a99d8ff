/// Where mixed voice goes: takes 20 ms frames of 48 kHz interleaved stereo Int16 (1,920 samples, left first).
public protocol VoiceAudioSink: AnyObject {
    /// Plays or stores one frame; a frame of the wrong length throws.
    func writeFrame(_ frame: [Int16]) throws(VoiceError)
}
