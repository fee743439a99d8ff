/// Where captured speech comes from: pulls 20 ms frames of 48 kHz mono Int16.
public protocol VoiceAudioSource: AnyObject {
    /// The next frame, ``VoiceFrameRead/pending`` if none is ready, or ``VoiceFrameRead/end`` when the input is over.
    func readFrame() throws(VoiceError) -> VoiceFrameRead
}
