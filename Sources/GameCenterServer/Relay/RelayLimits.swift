import GameCenterProtocol

/// The relay's per-member limits.
struct RelayLimits: Sendable {
    /// Messages (reliable and unreliable) a member may send per second, on average (devices are told).
    var messagesPerSecond: Double = 1_000
    /// Messages a member may send in one burst (devices are told).
    var burstMessages: Double = 5_000
    /// Reliable bytes waiting for one receiver's acknowledgement before the receiver counts as unable to keep up.
    var maximumUnackedBytes = 8 << 20
    /// Reliable messages waiting for one receiver's acknowledgement before it counts as unable to keep up.
    var maximumUnackedMessages = 40_000
    /// Unreliable messages waiting to go out on one WebSocket (UDP fallback) before newer ones are dropped.
    var maximumQueuedUnreliable = 256
    /// Voice packets a member may send per second on average; a member over it is disconnected as a flooder.
    var voicePacketsPerSecond = VoiceLimits.packetsPerSecond
    /// Voice packets a member may send in one burst.
    var voiceBurstPackets = VoiceLimits.burstPackets
    /// How often devices send heartbeats, as a fraction of the match timeout.
    var heartbeatsPerTimeout = 4.0

    /// The burst the relay itself allows: what a device may send at the advertised limits while its network is
    /// stalled for up to `timeout` arrives all at once, and must not count as a flood.
    func enforcedBurst(timeout: Duration) -> Double {
        burstMessages + messagesPerSecond * timeout.seconds
    }
}
