import DequeModule

/// Puts one sender's voice packets back in order and hands out one frame per 20 ms tick, adapting its delay
/// to the network's jitter.
///
/// Call ``put(_:)`` for each packet as it arrives and ``pop()`` once per 20 ms of playback. The buffer
/// reorders packets, drops duplicates and packets that come after their turn, tells lost frames (a gap in
/// sequence numbers: conceal, or recover from the next packet's FEC) from DTX gaps (consecutive sequence
/// numbers: the sender sent nothing), and holds at most ``Configuration/capacity`` packets.
///
/// Its delay starts at ``Configuration/initialDelay`` frames: one, so a packet plays on the first tick after it
/// arrives. A late packet grows the delay by one frame at once (one concealed frame is played), and so does a lost
/// frame whose next packet was not there yet, up to ``Configuration/recoveryDelay``: from then on the packet after
/// a loss is buffered when the loss is found, and Opus FEC rebuilds the lost frame from it. When every packet of
/// the last ``Configuration/adaptationWindow`` arrived two or more frames ahead of its turn, with no loss among them,
/// the delay shrinks by one frame, skipped inside a DTX gap so no speech is cut.
///
/// speexdsp's `jitter_buffer_*` was not used: it offers no look at the next packet, which Opus FEC needs
/// (frame *n* is rebuilt from packet *n*+1), and it ignores sequence numbers, so it cannot tell loss from DTX.
public struct VoiceJitterBuffer: Sendable {
    /// Settings of the buffer.
    public struct Configuration: Sendable, Equatable {
        /// Frames (20 ms each) to wait after the first packet before playing, 1…``maxDelay``; 1 plays it on the
        /// first tick after it arrives.
        public var initialDelay = 1
        /// The delay a lost frame raises the buffer to (when it is lower), so that the packet after the next loss is
        /// already buffered and its FEC can rebuild the lost frame; 1…``maxDelay``.
        public var recoveryDelay = 2
        /// The most frames the delay may grow to.
        public var maxDelay = 25
        /// The most packets held; a packet further ahead than this restarts the stream.
        public var capacity = 64
        /// Packets observed before the delay may shrink.
        public var adaptationWindow = 100

        /// The default settings: 20 ms initial delay, 40 ms after a loss, at most 500 ms, 64 packets.
        public init() {}
    }

    /// What to play for this tick.
    public enum Output: Sendable, Equatable {
        /// Decode this packet.
        case packet(VoicePacket)
        /// The frame was lost: recover it from the FEC in `next` (the packet of the following frame), or conceal it if nil.
        case missing(next: VoicePacket?)
        /// The sender sent nothing (DTX, or not talking): play comfort noise or silence.
        case silence
        /// Nothing has arrived yet, or the buffer is filling up to its delay.
        case buffering
    }

    /// What ``put(_:)`` did with a packet.
    public enum Admission: Sendable, Equatable {
        /// Buffered for its turn.
        case accepted
        /// A packet with the same timestamp is buffered or was just played; dropped.
        case duplicate
        /// Its turn has passed and its frame was concealed; dropped.
        case late
        /// It is further ahead than the buffer holds, or later than ``Configuration/maxDelay`` while newer in sequence
        /// than every packet played (the sender's clock fell behind): the buffer restarted from it.
        case restarted
    }

    /// Counters since the buffer was created.
    public struct Statistics: Sendable, Equatable {
        /// Packets given to ``put(_:)``.
        public var received = 0
        /// Duplicates dropped.
        public var duplicates = 0
        /// Packets dropped because their turn had passed.
        public var late = 0
        /// Frames reported ``Output/missing(next:)`` because of a sequence gap or an empty buffer mid-speech.
        public var lost = 0
        /// Frames skipped to shrink the delay.
        public var skipped = 0
        /// Frames stretched (concealed) to grow the delay.
        public var stretched = 0
        /// Packets dropped because the buffer was full, or cleared by a restart.
        public var overflowed = 0
    }

    /// The settings in use.
    public let configuration: Configuration
    /// Counters since the buffer was created.
    public private(set) var statistics = Statistics()

    /// Buffered packets, in timestamp order.
    private var packets: Deque<VoicePacket> = []
    /// The timestamp of the next frame to play, once playing.
    private var playhead: UInt32?
    private var lastSequence: UInt16 = 0
    private var lastSpeaking = false
    private var ticksWaited = 0
    private var emptyTicks = 0
    /// How many frames ahead of the playhead recent packets arrived.
    private var margins: Deque<Int> = []
    /// Timestamps of the last frames played from packets, to tell a repeat from a late packet.
    private var played: Deque<UInt32> = []
    private var growBy = 0
    private var shrinkBy = 0
    /// The current delay target in frames.
    public private(set) var delay: Int

    /// Creates an empty buffer.
    public init(_ configuration: Configuration = .init()) throws(VoiceError) {
        guard configuration.maxDelay >= 1, configuration.maxDelay < configuration.capacity else {
            throw VoiceError(
                .invalidArgument, "jitter buffer max delay must be 1…capacity−1 (\(configuration.capacity - 1)) frames, not \(configuration.maxDelay)")
        }
        guard (1...configuration.maxDelay).contains(configuration.initialDelay) else {
            throw VoiceError(.invalidArgument, "jitter buffer initial delay must be 1…\(configuration.maxDelay) frames, not \(configuration.initialDelay)")
        }
        guard (1...configuration.maxDelay).contains(configuration.recoveryDelay) else {
            throw VoiceError(.invalidArgument, "jitter buffer recovery delay must be 1…\(configuration.maxDelay) frames, not \(configuration.recoveryDelay)")
        }
        guard configuration.adaptationWindow >= 1 else {
            throw VoiceError(.invalidArgument, "jitter buffer adaptation window must be 1 or more packets, not \(configuration.adaptationWindow)")
        }
        self.configuration = configuration
        delay = configuration.initialDelay
    }

    /// The number of packets waiting.
    public var count: Int { packets.count }

    /// Offers an arriving packet.
    @discardableResult
    public mutating func put(_ packet: VoicePacket) -> Admission {
        statistics.received += 1
        if let playhead {
            let ahead = Self.distance(from: playhead, to: packet.timestamp)
            if ahead < 0 {
                if played.contains(packet.timestamp) {
                    statistics.duplicates += 1
                    return .duplicate
                }
                // Later than any delay allowed, yet newer in sequence than every packet played: the sender's clock
                // fell behind this one (its microphone paused and its timestamps did not run on, or it restarted).
                // Dropping it would drop everything after it too; the stream starts again from it.
                if -ahead > configuration.maxDelay, (1...configuration.capacity).contains(Self.sequenceDistance(from: lastSequence, to: packet.sequence)) {
                    restart()
                    insert(packet)
                    return .restarted
                }
                statistics.late += 1
                if delay < configuration.maxDelay { growBy = 1 }
                return .late
            }
            if ahead >= configuration.capacity {
                restart()
                insert(packet)
                return .restarted
            }
            margins.append(ahead)
            if margins.count > configuration.adaptationWindow { margins.removeFirst() }
        }
        guard !packets.contains(where: { $0.timestamp == packet.timestamp }) else {
            statistics.duplicates += 1
            return .duplicate
        }
        insert(packet)
        return .accepted
    }

    /// The frame to play for this 20 ms tick.
    public mutating func pop() -> Output {
        guard let head = playhead else {
            guard let first = packets.first else { return .buffering }
            ticksWaited += 1
            guard ticksWaited >= delay else { return .buffering }
            playhead = first.timestamp
            lastSequence = first.sequence &- 1
            return pop()
        }
        adapt()
        if growBy > 0 {
            growBy = 0
            delay += 1
            statistics.stretched += 1
            margins.removeAll()
            return lastSpeaking ? .missing(next: nil) : .silence
        }
        if let first = packets.first, first.timestamp == head {
            packets.removeFirst()
            played.append(head)
            if played.count > 32 { played.removeFirst() }
            playhead = head &+ 1
            lastSequence = first.sequence
            lastSpeaking = first.speaking
            emptyTicks = 0
            return .packet(first)
        }
        if let next = packets.first {
            emptyTicks = 0
            if next.sequence == lastSequence &+ 1 {
                let gap = Self.distance(from: head, to: next.timestamp)
                if shrinkBy > 0, gap >= 2 {
                    shrinkBy = 0
                    delay -= 1
                    statistics.skipped += 1
                    playhead = head &+ 2
                } else {
                    playhead = head &+ 1
                }
                return .silence
            }
            let recoverable = next.timestamp == head &+ 1
            lose(recoverable: recoverable)
            playhead = head &+ 1
            return .missing(next: recoverable ? next : nil)
        }
        playhead = head &+ 1
        emptyTicks += 1
        // A sender that stops mid-word (left, or muted) is silent after half a second, not concealed forever.
        if emptyTicks > 25 { lastSpeaking = false }
        guard lastSpeaking else {
            if shrinkBy > 0 {
                shrinkBy = 0
                delay -= 1
                statistics.skipped += 1
                playhead = head &+ 2
            }
            return .silence
        }
        lose(recoverable: false)
        return .missing(next: nil)
    }

    /// Counts a lost frame; one that FEC could not rebuild (its next packet was not there) raises the delay to
    /// ``Configuration/recoveryDelay``. Either way the delay does not shrink before a window without loss.
    private mutating func lose(recoverable: Bool) {
        statistics.lost += 1
        margins.removeAll()
        if !recoverable, delay < configuration.recoveryDelay { growBy = 1 }
    }

    private mutating func adapt() {
        guard margins.count >= configuration.adaptationWindow, delay > 1, let smallest = margins.min(), smallest >= 2 else { return }
        shrinkBy = 1
        margins.removeAll()
    }

    private mutating func insert(_ packet: VoicePacket) {
        var index = packets.endIndex
        while index > packets.startIndex, Self.distance(from: packet.timestamp, to: packets[index - 1].timestamp) > 0 {
            index -= 1
        }
        packets.insert(packet, at: index)
        if packets.count > configuration.capacity {
            packets.removeFirst()
            statistics.overflowed += 1
        }
    }

    private mutating func restart() {
        statistics.overflowed += packets.count
        packets.removeAll()
        playhead = nil
        ticksWaited = 0
        emptyTicks = 0
        margins.removeAll()
        played.removeAll()
        growBy = 0
        shrinkBy = 0
        lastSpeaking = false
    }

    /// Packets from sequence number `a` to `b`, allowing for wrap-around of the 16-bit sequence.
    static func sequenceDistance(from a: UInt16, to b: UInt16) -> Int {
        Int(Int16(bitPattern: b &- a))
    }

    /// Frames from `a` to `b`, allowing for wrap-around of the 32-bit timestamp.
    static func distance(from a: UInt32, to b: UInt32) -> Int {
        Int(Int32(bitPattern: b &- a))
    }
}
