import GameCenterProtocol
import NIOCore

/// The rules of one relayed match: who is in it, what each member still has to receive, and where to send it.
///
/// Pure state: the methods change it and say what to do (wake a writer, send datagrams, store a departure);
/// ``RelayMatch`` holds it under a lock and ``RelayConnection`` and ``UDPEndpoint`` do the I/O.
struct RelayMatchState {
    let limits: RelayLimits
    let timeout: Duration
    /// Whether members may reach each other directly: their ``PeerOffer``s are passed on only then.
    let peerToPeer: Bool
    /// Every member by index; changed only through the methods here and in the `RelayMatchState+…` files.
    var members: [RelayMemberSlot] = []

    init(limits: RelayLimits, timeout: Duration, peerToPeer: Bool = true) {
        self.limits = limits
        self.timeout = timeout
        self.peerToPeer = peerToPeer
    }

    /// What the caller must do after a change.
    struct Effects {
        /// Writers to wake.
        var wakes: [WriterWake] = []
        /// Members who left through the relay (timeout, flooding, too slow); their departure must be stored.
        var departed: [(playerID: String, reason: RelayCloseReason)] = []
        /// A member left: the match may be over.
        var memberLeft = false

        mutating func append(_ other: Effects) {
            wakes += other.wakes
            departed += other.departed
            memberLeft = memberLeft || other.memberLeft
        }
    }

    /// Whether no member is left.
    var isOver: Bool { !members.isEmpty && members.allSatisfy { $0.state == .left } }

    private func seconds(_ instant: ContinuousClock.Instant) -> Double {
        RelayTime.of(instant).seconds
    }

    // MARK: Membership

    /// Adds members the match gained (in join order) and removes those who left; returns the effects.
    mutating func updateMembers(current: [String], now: ContinuousClock.Instant) -> Effects {
        var effects = Effects()
        for playerID in current where !members.contains(where: { $0.playerID == playerID }) {
            guard members.count <= Int(UInt8.max) else { break }
            let slot = RelayMemberSlot(
                index: UInt8(members.count), playerID: playerID, now: RelayTime.of(now),
                rate: TokenBucket(rate: limits.messagesPerSecond, burst: limits.enforcedBurst(timeout: timeout), now: seconds(now)),
                voiceRate: TokenBucket(rate: limits.voicePacketsPerSecond, burst: limits.voiceBurstPackets, now: seconds(now)))
            members.append(slot)
            effects.wakes += announce(slot.announced, except: slot.index)
        }
        for slot in members where slot.state != .left && !current.contains(slot.playerID) {
            effects.append(remove(slot.index, reason: .left, message: "you left the match", store: false))
        }
        return effects
    }

    /// The member index of `playerID` if they are still in the match.
    func index(of playerID: String) -> UInt8? {
        members.first { $0.playerID == playerID && $0.state != .left }?.index
    }

    /// Opens a connection for a member: the previous one (if any) is replaced; what the member missed is written
    /// again, and the others' voice channels are told. `receiverStream`/`received` say what the device already
    /// has; `senderStream` names its numbering; `voiceAllowed` is false for a player parental controls keep from
    /// voice.
    mutating func attach(
        _ index: UInt8, connectionID: UInt64, key: RelayKey, wake: AsyncStream<Void>.Continuation,
        receiverStream: UInt64, received: UInt64, senderStream: UInt64, voiceAllowed: Bool = true, now: ContinuousClock.Instant
    ) -> (welcome: RelayMatchWelcome, effects: Effects) {
        var effects = Effects()
        let i = Int(index)
        // The old connection's writer finds another connection id and closes with `.replaced`.
        if let old = members[i].connection { effects.wakes.append(old.wake) }
        if receiverStream == members[i].receiverStream { members[i].acknowledge(through: received) }
        if senderStream != members[i].senderStream {
            members[i].senderStream = senderStream
            members[i].acceptedSeq = 0
        }
        members[i].connection = RelayConnectionSlot(connectionID: connectionID, key: key, wake: WriterWake(wake))
        members[i].connection!.control = voiceChannelFrames(except: index) + peerOfferFrames(except: index)
        members[i].voiceAllowed = voiceAllowed
        members[i].lastHeard = RelayTime.of(now)
        if members[i].state == .expected {
            members[i].state = .connected
            effects.wakes += announce(members[i].announced, except: index)
        }
        effects.wakes.append(members[i].connection!.wake)
        let welcome = RelayMatchWelcome(
            memberIndex: index, acceptedSeq: members[i].acceptedSeq,
            receiverStream: members[i].receiverStream, members: members.map(\.announced), peerToPeer: peerToPeer)
        return (welcome, effects)
    }

    /// A connection ended (the device may come back within the timeout).
    mutating func detach(_ index: UInt8, connectionID: UInt64) {
        guard members[Int(index)].connection?.connectionID == connectionID else { return }
        members[Int(index)].connection = nil
    }

    /// Takes a member out of the match: the others are told; its connection closes with `reason`.
    mutating func remove(_ index: UInt8, reason: RelayCloseReason, message: String, store: Bool) -> Effects {
        var effects = Effects()
        let i = Int(index)
        guard members[i].state != .left else { return effects }
        members[i].state = .left
        members[i].leftReason = reason
        effects.memberLeft = true
        members[i].outbound.removeAll()
        members[i].outboundBytes = 0
        members[i].voiceChannels.removeAll()
        if members[i].connection != nil {
            members[i].connection?.closing = (reason, message)
            effects.wakes.append(members[i].connection!.wake)
        }
        effects.wakes += announce(members[i].announced, except: index)
        if store { effects.departed.append((members[i].playerID, reason)) }
        return effects
    }

    /// Members silent for longer than the timeout leave.
    mutating func expire(now: ContinuousClock.Instant, statistics: RelayStatistics) -> Effects {
        var effects = Effects()
        for slot in members where slot.state != .left && RelayTime.of(now) - slot.lastHeard > timeout {
            statistics.add(.membersTimedOut)
            let message = slot.state == .expected ? "never connected to the match" : "silent for longer than the match's timeout"
            effects.append(remove(slot.index, reason: .timedOut, message: message, store: true))
        }
        return effects
    }

    private mutating func announce(_ member: RelayMember, except index: UInt8) -> [WriterWake] {
        var frame = ByteBuffer()
        RelayServerFrame.memberState(member).write(to: &frame)
        return enqueueControl(frame, toAllBut: index)
    }

    mutating func enqueueControl(_ frame: ByteBuffer, toAllBut index: UInt8) -> [WriterWake] {
        var wakes: [WriterWake] = []
        for i in members.indices where members[i].index != index && members[i].state != .left && members[i].connection != nil {
            members[i].connection!.control.append(frame)
            wakes.append(members[i].connection!.wake)
        }
        return wakes
    }

    /// Queues a heartbeat for the member's connection.
    mutating func queueHeartbeat(_ index: UInt8, connectionID: UInt64) -> WriterWake? {
        let i = Int(index)
        guard members[i].connection?.connectionID == connectionID else { return nil }
        var frame = ByteBuffer()
        RelayServerFrame.heartbeat.write(to: &frame)
        members[i].connection!.control.append(frame)
        return members[i].connection!.wake
    }

    // MARK: Direct paths

    /// Member `index` offered a direct path: kept (for members that connect later) and passed on to the others, with
    /// the address its datagrams came from added; nothing is passed on in a relay-only match, nor beyond
    /// ``maximumPeerOffersPerConnection`` (each one is queued for every other member).
    mutating func receivePeerOffer(from index: UInt8, connectionID: UInt64, _ offer: PeerOffer, now: ContinuousClock.Instant) -> Effects {
        let i = Int(index)
        guard peerToPeer, members[i].state != .left, let connection = members[i].connection, connection.connectionID == connectionID else {
            return Effects()
        }
        members[i].lastHeard = RelayTime.of(now)
        members[i].connection!.peerOffers += 1
        guard members[i].connection!.peerOffers <= Self.maximumPeerOffersPerConnection else { return Effects() }
        var offer = offer
        if let seen = connection.udpAddress.flatMap(PeerCandidate.init), !offer.candidates.contains(seen),
            offer.candidates.count < PeerOffer.maximumCandidates
        {
            offer.candidates.append(seen)
        }
        members[i].peerOffer = offer
        var frame = ByteBuffer()
        RelayServerFrame.peerOffer(sender: index, offer).write(to: &frame)
        return Effects(wakes: enqueueControl(frame, toAllBut: index))
    }

    /// Offers passed on per connection: a device sends one each time it connects.
    static let maximumPeerOffersPerConnection = 4

    /// The offers of the members still in the match other than `index`, for a connection that opens.
    private func peerOfferFrames(except index: UInt8) -> [ByteBuffer] {
        members.compactMap { member in
            guard member.index != index, member.state != .left, let offer = member.peerOffer else { return nil }
            var frame = ByteBuffer()
            RelayServerFrame.peerOffer(sender: member.index, offer).write(to: &frame)
            return frame
        }
    }

    // MARK: Reliable data

    /// The outcome of a reliable message from a member.
    enum ReliableOutcome {
        /// Accepted (or a duplicate); wake these writers.
        case delivered(Effects)
        /// The frame came on a connection that was replaced or closed: end it.
        case staleConnection
    }

    /// A reliable message from member `index`: numbered for each recipient and queued for them.
    mutating func receiveReliable(
        from index: UInt8, connectionID: UInt64, seq: UInt64, recipients: [UInt8], payload: ByteBuffer,
        now: ContinuousClock.Instant, statistics: RelayStatistics
    ) -> ReliableOutcome {
        let i = Int(index)
        guard members[i].state != .left, members[i].connection?.connectionID == connectionID else { return .staleConnection }
        members[i].lastHeard = RelayTime.of(now)
        var effects = Effects()
        members[i].connection!.ackDue = true
        effects.wakes.append(members[i].connection!.wake)
        guard seq > members[i].acceptedSeq else {
            statistics.add(.reliableDuplicates)
            return .delivered(effects)
        }
        guard members[i].rate.take(now: seconds(now)) else {
            statistics.add(.membersFlooding)
            effects.append(remove(index, reason: .flooding, message: Self.floodingMessage(limits), store: true))
            return .delivered(effects)
        }
        members[i].acceptedSeq = seq
        statistics.add(.reliableAccepted)
        let (targets, unknown) = resolve(recipients, from: index)
        if !unknown.isEmpty { effects.wakes += reportNonMembers(unknown, to: index, now: now, statistics: statistics) }
        for target in targets {
            let t = Int(target)
            var frame = ByteBuffer()
            frame.reserveCapacity(payload.readableBytes + 10)
            RelayServerFrame.reliable(seq: members[t].nextOutboundSeq, sender: index, payload: payload).write(to: &frame)
            members[t].outbound.append(.init(seq: members[t].nextOutboundSeq, frame: frame))
            members[t].nextOutboundSeq += 1
            members[t].outboundBytes += frame.readableBytes
            if members[t].outboundBytes > limits.maximumUnackedBytes || members[t].outbound.count > limits.maximumUnackedMessages {
                statistics.add(.membersTooSlow)
                effects.append(remove(target, reason: .tooSlow, message: "you did not keep up with the match's data", store: true))
            } else if let wake = members[t].connection?.wake {
                effects.wakes.append(wake)
            }
        }
        return .delivered(effects)
    }

    static func floodingMessage(_ limits: RelayLimits) -> String {
        "sent faster than the relay allows: at most \(Int(limits.messagesPerSecond)) messages per second (bursts of \(Int(limits.burstMessages)))"
    }

    /// The member acknowledged the reliable messages it received up to `seq`.
    mutating func acknowledge(_ index: UInt8, connectionID: UInt64, through seq: UInt64, now: ContinuousClock.Instant) {
        let i = Int(index)
        guard members[i].connection?.connectionID == connectionID else { return }
        members[i].lastHeard = RelayTime.of(now)
        members[i].acknowledge(through: seq)
    }

    /// Anything from the member counts as a sign of life.
    mutating func heard(_ index: UInt8, connectionID: UInt64, now: ContinuousClock.Instant) {
        guard members[Int(index)].connection?.connectionID == connectionID else { return }
        members[Int(index)].lastHeard = RelayTime.of(now)
    }

    /// What a connection's writer must write next.
    enum Outgoing {
        case frames([ByteBuffer])
        /// Write the closing frame and end the connection.
        case close(RelayCloseReason, String)
    }

    /// Takes the frames waiting for member `index`'s connection.
    mutating func takeOutgoing(_ index: UInt8, connectionID: UInt64) -> Outgoing {
        let i = Int(index)
        guard var connection = members[i].connection, connection.connectionID == connectionID else {
            if let reason = members[i].leftReason { return .close(reason, "you are no longer in the match") }
            return .close(.replaced, "another connection of this player joined the match")
        }
        if let closing = connection.closing {
            if members[i].connection?.connectionID == connectionID, members[i].state == .left { members[i].connection = nil }
            return .close(closing.reason, closing.message)
        }
        var frames = connection.control
        connection.control.removeAll(keepingCapacity: true)
        connection.queuedUnreliable = 0
        if connection.ackDue {
            var ack = ByteBuffer()
            RelayServerFrame.ack(members[i].acceptedSeq).write(to: &ack)
            frames.append(ack)
            connection.ackDue = false
        }
        let outbound = members[i].outbound
        if connection.writtenOutbound < outbound.count {
            frames.reserveCapacity(frames.count + outbound.count - connection.writtenOutbound)
            for message in outbound[(outbound.startIndex + connection.writtenOutbound)...] { frames.append(message.frame) }
            connection.writtenOutbound = outbound.count
        }
        members[i].connection = connection
        return .frames(frames)
    }

    // MARK: Unreliable data

    /// An unreliable message from member `index` that came over its WebSocket; see the other form.
    mutating func receiveUnreliable(
        from index: UInt8, recipients: [UInt8], payload: ByteBuffer, now: ContinuousClock.Instant,
        statistics: RelayStatistics, datagrams: DatagramOutbox
    ) -> Effects {
        recipients.withUnsafeBytes { recipients in
            payload.withUnsafeReadableBytes { payload in
                receiveUnreliable(from: index, recipients: recipients, payload: payload, now: now, statistics: statistics, datagrams: datagrams)
            }
        }
    }

    /// An unreliable message from member `index` (arrived by UDP or over its WebSocket) to the members whose indices
    /// `recipients` holds (none: every other member): sealed into `datagrams` for each recipient that has a UDP
    /// address, queued on the WebSocket for the others.
    mutating func receiveUnreliable(
        from index: UInt8, recipients: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer, now: ContinuousClock.Instant,
        statistics: RelayStatistics, datagrams: DatagramOutbox
    ) -> Effects {
        var effects = Effects()
        let i = Int(index)
        members[i].lastHeard = RelayTime.of(now)
        guard members[i].rate.take(now: seconds(now)) else {
            statistics.add(.unreliableRateLimited)
            return effects
        }
        func forward(to target: Int) {
            let forwarded = forwardUnreliable(
                to: target, kind: .serverData, size: RelayDatagram.serverDataSize(payloadCount: payload.count),
                seal: { header, key, space in RelayDatagram.sealServerData(header, sender: index, payload: payload, key: key, in: space) },
                frame: { .unreliable(sender: index, payload: ByteBuffer(bytes: payload)) },
                queueFull: .unreliableQueueFull, statistics: statistics, datagrams: datagrams, effects: &effects)
            if forwarded { statistics.add(.unreliableForwarded) }
        }
        if recipients.isEmpty {
            // Everyone: no list of targets to build for the commonest message.
            for target in members.indices where target != i && members[target].state != .left { forward(to: target) }
            return effects
        }
        let (targets, unknown) = resolve(Array(recipients), from: index)
        if !unknown.isEmpty { effects.wakes += reportNonMembers(unknown, to: index, now: now, statistics: statistics) }
        for target in targets { forward(to: Int(target)) }
        return effects
    }

    /// Sends to member `target` by UDP when it has an address (`seal` writes the datagram of at most `size` bytes),
    /// else queues `frame()` on its WebSocket; false when nothing went (the connection closing, or its queue full,
    /// which counts `queueFull`).
    mutating func forwardUnreliable(
        to target: Int, kind: RelayDatagramKind, size: Int,
        seal: (RelayDatagramHeader, RelayKey, UnsafeMutableRawBufferPointer) -> Int, frame: () -> RelayServerFrame,
        queueFull: RelayStatistics.Counter, statistics: RelayStatistics, datagrams: DatagramOutbox, effects: inout Effects
    ) -> Bool {
        let maximumQueued = limits.maximumQueuedUnreliable
        // In place: a copy of the connection would copy its queued frames on every append.
        return withConnection(target) { connection -> Bool in
            guard connection.closing == nil else { return false }
            if let address = connection.udpAddress {
                connection.datagramCounter += 1
                let header = RelayDatagramHeader(kind: kind, connectionID: connection.connectionID, counter: connection.datagramCounter)
                let key = connection.key
                datagrams.append(to: address, maximumLength: size) { space in seal(header, key, space) }
                return true
            }
            guard connection.queuedUnreliable < maximumQueued else {
                statistics.add(queueFull)
                return false
            }
            var bytes = ByteBuffer()
            frame().write(to: &bytes)
            connection.control.append(bytes)
            connection.queuedUnreliable += 1
            effects.wakes.append(connection.wake)
            return true
        } ?? false
    }

    /// The connection's datagram key and replay check: true when the datagram is new; records where it came from.
    mutating func acceptDatagram(
        _ index: UInt8, connectionID: UInt64, counter: UInt64, from address: DatagramAddress, now: ContinuousClock.Instant
    ) -> Bool {
        let i = Int(index)
        guard members[i].state != .left else { return false }
        let accepted = withConnection(i) { connection -> Bool in
            guard connection.connectionID == connectionID, connection.replay.accept(counter) else { return false }
            // Only the newest authentic datagram moves the return address (a delayed one must not move it back).
            if counter == connection.replay.highest { connection.udpAddress = address }
            return true
        }
        guard accepted == true else { return false }
        members[i].lastHeard = RelayTime.of(now)
        return true
    }

    /// Seals a probe answer for member `index`'s connection into `datagrams`, to `address`.
    mutating func probeAck(_ index: UInt8, to address: DatagramAddress, into datagrams: DatagramOutbox) {
        _ = withConnection(Int(index)) { connection in
            connection.datagramCounter += 1
            let header = RelayDatagramHeader(kind: .serverProbeAck, connectionID: connection.connectionID, counter: connection.datagramCounter)
            let key = connection.key
            datagrams.append(to: address, maximumLength: RelayDatagram.headerSize + RelayDatagram.tagSize) { space in
                RelayDatagram.sealInPlace(header, bodyCount: 0, key: key, in: space)
            }
        }
    }

    /// Runs `body` on member `index`'s open connection in place; nil when the member has none.
    mutating func withConnection<Result>(_ index: Int, _ body: (inout RelayConnectionSlot) -> Result) -> Result? {
        guard members[index].connection != nil else { return nil }
        return body(&members[index].connection!)
    }

    // MARK: Addressing

    /// Recipients by index: empty means every other member still in the match; unknown indices are returned apart.
    private func resolve(_ recipients: [UInt8], from index: UInt8) -> (targets: [UInt8], unknown: [UInt8]) {
        if recipients.isEmpty {
            return (members.lazy.filter { $0.index != index && $0.state != .left }.map(\.index), [])
        }
        var targets: [UInt8] = []
        var unknown: [UInt8] = []
        for recipient in recipients {
            if Int(recipient) >= members.count || recipient == index {
                unknown.append(recipient)
            } else if members[Int(recipient)].state != .left, !targets.contains(recipient) {
                targets.append(recipient)
            }
        }
        return (targets, unknown)
    }

    /// Counts messages to non-members and tells the sender, at most once a second (the telling must not become a
    /// flood of its own).
    private mutating func reportNonMembers(
        _ unknown: [UInt8], to index: UInt8, now: ContinuousClock.Instant,
        statistics: RelayStatistics
    ) -> [WriterWake] {
        statistics.add(.nonMemberRecipients, unknown.count)
        let i = Int(index)
        guard members[i].connection != nil else { return [] }
        if let last = members[i].connection!.lastErrorReport, RelayTime.of(now) - last < .seconds(1) { return [] }
        members[i].connection!.lastErrorReport = RelayTime.of(now)
        var frame = ByteBuffer()
        RelayServerFrame.error(
            code: UInt16(ErrorCode.invalidParameter.rawValue),
            message: "recipients \(unknown) are not other members of this match; messages went to the members only"
        )
        .write(to: &frame)
        members[i].connection!.control.append(frame)
        return [members[i].connection!.wake]
    }
}

/// What the relay tells a member when its connection opens (the connection's own fields are added by the caller).
struct RelayMatchWelcome {
    var memberIndex: UInt8
    var acceptedSeq: UInt64
    var receiverStream: UInt64
    var members: [RelayMember]
    var peerToPeer: Bool
}
