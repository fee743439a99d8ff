/// Learns when devices' realtime channels open and close: the matchmaker keeps a request only while its device
/// can be told about the match.
protocol ChannelPresence: Sendable {
    /// A channel of this session opened (called before the channel's first frame is sent).
    func channelOpened(sessionID: String)
    /// A channel of this session closed.
    func channelClosed(sessionID: String) async
}
