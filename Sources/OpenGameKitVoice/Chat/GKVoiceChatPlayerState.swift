/// What a voice chat's update handler hears about a member of the channel.
public enum GKVoiceChatPlayerState: Sendable, Equatable {
    /// The player started the channel (receives and may talk in it).
    case connected
    /// The player stopped or left the channel, or left the match.
    case disconnected
    /// The player started talking (their device's voice activity detection says so).
    case speaking
    /// The player stopped talking.
    case silent
}
