import DequeModule
import GameCenterProtocol
import NIOCore

/// Everything the relay keeps for one member of a match; it outlives the member's connections, so that a device
/// reconnecting after a short break gets what it missed and its resent messages are recognised.
struct RelayMemberSlot {
    /// A reliable message waiting for the receiver's acknowledgement.
    struct Outbound {
        var seq: UInt64
        /// The encoded ``RelayServerFrame/reliable(seq:sender:payload:)`` frame.
        var frame: ByteBuffer
    }

    let index: UInt8
    let playerID: String
    var state: RelayMemberState = .expected
    /// Why the member left, once it has.
    var leftReason: RelayCloseReason?
    /// When the member was last heard from, as a ``RelayTime``.
    var lastHeard: Duration
    var connection: RelayConnectionSlot?

    /// The sender stream the device numbers its reliable messages in (a new `GKMatch` starts a new one).
    var senderStream: UInt64 = 0
    /// The highest reliable sequence number accepted from the member in `senderStream`.
    var acceptedSeq: UInt64 = 0

    /// Names this numbering of messages to the member; a device that knows another id starts over.
    let receiverStream = UInt64.random(in: 1...UInt64.max)
    var nextOutboundSeq: UInt64 = 1
    /// Reliable messages not yet acknowledged by the member, oldest first.
    var outbound: Deque<Outbound> = []
    var outboundBytes = 0
    var rate: TokenBucket

    /// The voice channels the member is in, and whether it receives each (never `.none`: leaving removes it).
    var voiceChannels: [String: VoiceChannelMembership] = [:]
    /// Whether the member may use voice: false for an underage player (parental controls).
    var voiceAllowed = true
    /// The member's voice packet limit, apart from its data limit.
    var voiceRate: TokenBucket
    /// How the others may reach the member directly, as it last offered (with the address the relay saw added).
    var peerOffer: PeerOffer?

    init(index: UInt8, playerID: String, now: Duration, rate: TokenBucket, voiceRate: TokenBucket) {
        self.index = index
        self.playerID = playerID
        self.lastHeard = now
        self.rate = rate
        self.voiceRate = voiceRate
    }

    /// The member as the relay announces it.
    var announced: RelayMember { RelayMember(index: index, playerID: playerID, state: state) }

    /// Drops what the member acknowledged; the connection's write position moves with it.
    mutating func acknowledge(through seq: UInt64) {
        while let first = outbound.first, first.seq <= seq {
            outboundBytes -= first.frame.readableBytes
            outbound.removeFirst()
            if let written = connection?.writtenOutbound, written > 0 { connection?.writtenOutbound = written - 1 }
        }
    }
}

/// One open relay WebSocket of a member.
struct RelayConnectionSlot {
    let connectionID: UInt64
    let key: RelayKey
    /// Wakes the connection's writer.
    let wake: WriterWake
    /// How many of the member's `outbound` messages this connection has written.
    var writtenOutbound = 0
    /// Frames to write once, in order (member changes, errors, unreliable data over the WebSocket).
    var control: [ByteBuffer] = []
    var queuedUnreliable = 0
    /// The member's accepted sequence number should be acknowledged.
    var ackDue = false
    /// Where the device's authentic datagrams come from; nil until one arrived (unreliable data then goes over
    /// the WebSocket).
    var udpAddress: DatagramAddress?
    var replay = ReplayWindow()
    /// The last counter the relay used for a datagram to the device.
    var datagramCounter: UInt64 = 0
    /// When the device was last told that it addressed a non-member, as a ``RelayTime``.
    var lastErrorReport: Duration?
    /// Set when this connection must end: the frame explains why.
    var closing: (reason: RelayCloseReason, message: String)?
    /// How many ``PeerOffer``s the connection sent (a device sends one; a few more are passed on, then none).
    var peerOffers = 0
}

/// The relay's clock: a `Duration` since the process's first relay reading. `ContinuousClock.Instant` is resilient,
/// and relay state on the per-datagram path stores only types whose layout is fixed when compiled.
enum RelayTime {
    private static let origin = ContinuousClock.now

    /// `instant` as a relay time.
    static func of(_ instant: ContinuousClock.Instant) -> Duration {
        instant - origin
    }
}
