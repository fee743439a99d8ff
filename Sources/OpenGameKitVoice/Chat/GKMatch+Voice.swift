import GameCenterProtocol
import OpenGameKit

extension GKMatch {
    /// The voice channel named `name`: the same object for the same name. Nil when the channel cannot be joined;
    /// ``voiceChat(named:)`` says why (parental controls, a name outside 1…32 UTF-8 bytes, a ninth channel, a
    /// disconnected match).
    public func voiceChat(withName name: String) -> GKVoiceChat? {
        try? voiceChat(named: name)
    }

    /// The voice channel named `name`, joining it on the first call; throws the reason it cannot be joined:
    /// `parentalControlsBlocked` for a player parental controls keep from voice chat (an underage account),
    /// `invalidParameter` for a bad name, a ninth channel or a disconnected match.
    public func voiceChat(named name: String) throws -> GKVoiceChat {
        try voiceEngine.channel(named: name)
    }

    /// Where this match's voice chat captures and plays audio: any ``VoiceAudioSource`` and ``VoiceAudioSink``
    /// (WAV files or pipes, PCM pushed and pulled by a game's own audio engine, PulseAudio/PipeWire). Nil for
    /// either means the system's default microphone or speakers, opened when a channel first needs them.
    public func setVoiceAudio(source: (any VoiceAudioSource)?, sink: (any VoiceAudioSink)?) {
        voiceEngine.setAudio(source: source, sink: sink)
    }

    /// The match's voice engine, made on first use.
    var voiceEngine: VoiceChatEngine {
        // The attachment slot holds nothing else, so the cast always succeeds.
        voice.attachment { VoiceChatEngine(transport: voice) }!
    }
}
