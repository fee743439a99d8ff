import DequeModule
import Foundation
import GameCenterProtocol
import NIOCore

/// A device's side of a match relay, without I/O: the reliable messages not yet acknowledged (resent after a
/// reconnect), what was received (duplicates dropped), members' states, the send limit, the UDP path, and the
/// direct paths to the other members (``MatchPeers``).
struct MatchRelayState {
    /// A reliable message waiting for the relay's acknowledgement.
    struct Pending {
        var seq: UInt64
        var recipients: [String]
        /// The message's number for each recipient (``MatchPeers``), told in its envelope when the match allows
        /// direct paths.
        var numbers: [String: UInt64]
        var payload: ByteBuffer
    }

    /// The open connection's part of the state.
    struct Connection {
        var connectionID: UInt64
        var key: RelayKey
        var wake: WriterWake
        /// How many of `pending` this connection has written.
        var writtenPending = 0
        var control: [ByteBuffer] = []
        var udpConfirmed = false
        var replay = ReplayWindow()
        var datagramCounter: UInt64 = 0
    }

    let localPlayerID: String
    /// The members the match started with, for checking recipients before the relay has named them.
    var knownPlayers: [String]
    /// Every member by relay index (empty until the first welcome).
    var members: [RelayMember] = []
    var localIndex: UInt8?
    var connection: Connection?
    /// Set once the match is over for this device; nothing is sent after it.
    var ended = false
    /// UDP did not get through: unreliable data goes over the WebSocket.
    var udpFallback = false

    /// The direct paths to the other members.
    var peers: MatchPeers
    /// Whether the match allows direct paths, as the first welcome said (nil before it); the same for every member.
    var peerToPeer: Bool?
    /// This device keeps to the relay (`GKMatchRequest.relayOnly`): it offers no direct path and takes none.
    let relayOnly: Bool
    /// This device's offer, once its UDP socket knows its addresses.
    var localOffer: PeerOffer?

    /// Numbers this device's reliable messages; a new `GKMatch` is a new stream.
    let senderStream = UInt64.random(in: 1...UInt64.max)
    var nextSeq: UInt64 = 1
    var pending: Deque<Pending> = []
    var pendingBytes = 0

    var receiverStream: UInt64 = 0
    var lastReceived: UInt64 = 0
    var receivedSinceAck = 0

    /// The relay's send limit (replaced by the one each welcome states).
    var rate = TokenBucket(rate: 1_000, burst: 5_000, now: 0)

    /// This device's voice channels and whether it receives each (told again to every new connection).
    var voiceChannels: [String: VoiceChannelMembership] = [:]
    /// The other members' voice channels, by channel and member index, as the relay told them.
    var voiceMembers: [String: [UInt8: VoiceChannelMembership]] = [:]
    /// The relay's voice limit: a device over it is disconnected, so it is kept here first.
    var voiceRate = TokenBucket(rate: VoiceLimits.packetsPerSecond, burst: VoiceLimits.burstPackets, now: 0)

    /// Most reliable bytes held for resending before sends are refused.
    static let maximumPendingBytes = 8 << 20

    init(matchID: String, localPlayerID: String, knownPlayers: [String], relayOnly: Bool = false) {
        self.localPlayerID = localPlayerID
        self.knownPlayers = knownPlayers
        self.relayOnly = relayOnly
        self.peers = MatchPeers(matchID: matchID, localPlayerID: localPlayerID, stream: senderStream)
    }

    // MARK: Sending

    /// Checks a send and queues it; throws the error the game gets.
    mutating func queue(_ payload: Data, to players: [String]?, reliable: Bool, now: Double) throws -> Outbound {
        guard !ended else { throw GKError(.invalidParameter, "this match is disconnected; it sends nothing more") }
        let limit = reliable ? Limits.maximumReliableMessageBytes : Limits.maximumUnreliableMessageBytes
        guard payload.count <= limit else {
            throw GKError(.invalidParameter, "\(reliable ? "reliable" : "unreliable") messages are at most \(limit) bytes; this one is \(payload.count)")
        }
        var recipients = try check(players ?? [])
        if reliable {
            let waiting = pendingBytes + peers.unconfirmedBytes
            guard waiting + payload.count <= Self.maximumPendingBytes else {
                throw GKError(
                    .communicationsFailure,
                    "\(waiting) bytes of reliable data are still waiting to be confirmed (at most \(Self.maximumPendingBytes)); try again shortly")
            }
        }
        guard rate.take(now: now) else {
            throw GKError(
                .communicationsFailure, "sending too fast: the relay takes at most \(Int(rate.rate)) messages per second (bursts of \(Int(rate.burst)))")
        }
        var outbound = Outbound()
        if reliable {
            let buffer = ByteBuffer(bytes: payload)
            // Numbered for each recipient; those with a direct path get it by UDP, the others through the relay.
            var numbers: [String: UInt64] = [:]
            for player in recipients.isEmpty ? otherPlayers : recipients {
                let number = peers.number(to: player)
                if let send = peers.sendReliable(buffer, number: number, to: player, now: now) {
                    outbound.direct.append(send)
                } else {
                    numbers[player] = number
                }
            }
            guard outbound.direct.isEmpty || !numbers.isEmpty else { return outbound }
            pending.append(Pending(seq: nextSeq, recipients: outbound.direct.isEmpty ? recipients : numbers.keys.sorted(), numbers: numbers, payload: buffer))
            nextSeq += 1
            pendingBytes += payload.count
            outbound.wake = connection?.wake
            return outbound
        }
        // The commonest send, with no direct path, copies nothing here: the relay's datagram is sealed from `payload`.
        if !peers.links.isEmpty {
            let buffer = ByteBuffer(bytes: payload)
            var relayed: [String] = []
            for player in recipients.isEmpty ? otherPlayers : recipients {
                if let send = peers.sendUnreliable(buffer, to: player) { outbound.direct.append(send) } else { relayed.append(player) }
            }
            if !outbound.direct.isEmpty {
                guard !relayed.isEmpty else { return outbound }
                recipients = relayed
            }
        }
        guard connection != nil, let indices = indices(of: recipients) else { return outbound }
        if connection!.udpConfirmed {
            connection!.datagramCounter += 1
            outbound.datagram = (
                RelayDatagramHeader(kind: .clientData, connectionID: connection!.connectionID, counter: connection!.datagramCounter),
                recipients: indices, key: connection!.key
            )
            return outbound
        }
        var frame = ByteBuffer()
        RelayClientFrame.unreliable(recipients: indices, payload: ByteBuffer(bytes: payload)).write(to: &frame)
        connection!.control.append(frame)
        outbound.wake = connection!.wake
        return outbound
    }

    /// What to do after queueing a message.
    struct Outbound {
        /// The relay connection's writer to wake.
        var wake: WriterWake?
        /// Seal the payload under this header and send it to the relay by UDP (its counter is taken).
        var datagram: (header: RelayDatagramHeader, recipients: [UInt8], key: RelayKey)?
        /// Datagrams to seal and send on direct paths.
        var direct: [MatchPeers.Send] = []
    }

    /// The other members still in the match (before the relay named them, the players the match started with).
    private var otherPlayers: [String] {
        if members.isEmpty { return knownPlayers.filter { $0 != localPlayerID } }
        return members.filter { $0.state != .left && !$0.playerID.isEmpty && $0.playerID != localPlayerID }.map(\.playerID)
    }

    /// What to do after queueing a voice packet.
    enum VoiceOutbound {
        case none
        case wake(WriterWake)
        /// Seal the packet under this header and send it by UDP (its counter is taken).
        case datagram(RelayDatagramHeader, key: RelayKey)
    }

    /// Recipients must be other members still in the match; empty means all of them.
    private func check(_ players: [String]) throws -> [String] {
        for player in players {
            guard player != localPlayerID else { throw GKError(.invalidParameter, "a player cannot send data to themself") }
            if members.isEmpty {
                guard knownPlayers.contains(player) else {
                    throw GKError(.invalidParameter, "\(player) is not a member of this match; send to the players in playerIDs")
                }
                continue
            }
            guard let member = members.first(where: { $0.playerID == player }) else {
                throw GKError(.invalidParameter, "\(player) is not a member of this match; send to the players in playerIDs")
            }
            guard member.state != .left else { throw GKError(.invalidParameter, "\(player) left the match") }
        }
        return players
    }

    /// The relay indices of `players` (empty: everyone); nil before the relay named the members.
    private func indices(of players: [String]) -> [UInt8]? {
        guard !members.isEmpty else { return nil }
        return players.compactMap { player in members.first { $0.playerID == player }?.index }
    }

    /// The indices a queued message goes to; a message whose recipients the relay does not know is addressed to
    /// this device alone, which the relay delivers to nobody (its number is still used up).
    private func addressing(_ players: [String]) -> [UInt8] {
        let found = indices(of: players) ?? []
        if !players.isEmpty && found.isEmpty { return [localIndex ?? 0] }
        return found
    }

    // MARK: Voice

    /// Joins, starts or stops receiving, or leaves a voice channel; throws the error the game gets.
    mutating func queueVoiceChannel(_ channel: String, _ membership: VoiceChannelMembership) throws -> WriterWake? {
        guard !ended else { throw GKError(.invalidParameter, "this match is disconnected; its voice chat is over") }
        if let problem = VoiceLimits.problem(withChannelName: channel) { throw GKError(.invalidParameter, problem) }
        let old = voiceChannels[channel] ?? VoiceChannelMembership.none
        guard old != membership else { return nil }
        if old == .none && voiceChannels.count >= VoiceLimits.maximumChannelsPerMember {
            throw GKError(.invalidParameter, "a player may be in at most \(VoiceLimits.maximumChannelsPerMember) voice channels of a match at once")
        }
        voiceChannels[channel] = membership == .none ? nil : membership
        guard connection != nil else { return nil }
        var frame = ByteBuffer()
        RelayClientFrame.voiceChannel(membership: membership, channel: channel).write(to: &frame)
        connection!.control.append(frame)
        return connection!.wake
    }

    /// Checks a voice packet and says how it goes out; throws the error the game gets.
    mutating func queueVoice(_ payload: Data, on channel: String, now: Double) throws -> VoiceOutbound {
        guard !ended else { throw GKError(.invalidParameter, "this match is disconnected; its voice chat is over") }
        guard voiceChannels[channel] != nil else { throw GKError(.invalidParameter, "join the voice channel \(channel) before talking in it") }
        guard payload.count <= VoiceLimits.maximumPayloadBytes else {
            throw GKError(.invalidParameter, "a voice packet is at most \(VoiceLimits.maximumPayloadBytes) bytes; this one is \(payload.count)")
        }
        guard voiceRate.take(now: now) else {
            throw GKError(.communicationsFailure, "sending voice too fast: the relay takes at most \(Int(voiceRate.rate)) packets per second")
        }
        guard connection != nil, !members.isEmpty else { return .none }
        if connection!.udpConfirmed {
            connection!.datagramCounter += 1
            return .datagram(
                RelayDatagramHeader(kind: .clientVoice, connectionID: connection!.connectionID, counter: connection!.datagramCounter),
                key: connection!.key)
        }
        var frame = ByteBuffer()
        RelayClientFrame.voice(channel: channel, payload: ByteBuffer(bytes: payload)).write(to: &frame)
        connection!.control.append(frame)
        return .wake(connection!.wake)
    }

    /// Where a member stands in a voice channel, as the relay told it; returns the player to announce, if known.
    mutating func voiceChannelChanged(member: UInt8, channel: String, membership: VoiceChannelMembership) -> String? {
        if membership == .none {
            voiceMembers[channel]?.removeValue(forKey: member)
            if voiceMembers[channel]?.isEmpty == true { voiceMembers.removeValue(forKey: channel) }
        } else {
            voiceMembers[channel, default: [:]][member] = membership
        }
        return player(member)
    }

    /// The other members in `channel` and whether each receives it, by player id.
    func voiceMembers(of channel: String) -> [String: VoiceChannelMembership] {
        var players: [String: VoiceChannelMembership] = [:]
        for (index, membership) in voiceMembers[channel] ?? [:] {
            if let player = player(index), members[Int(index)].state != .left { players[player] = membership }
        }
        return players
    }

    /// Frames the connection must write next: control frames, an acknowledgement, reliable messages not yet written.
    mutating func takeOutgoing() -> [ByteBuffer] {
        guard var connection, !members.isEmpty else { return [] }
        var frames = connection.control
        connection.control.removeAll(keepingCapacity: true)
        if receivedSinceAck > 0 {
            var ack = ByteBuffer()
            RelayClientFrame.ack(lastReceived).write(to: &ack)
            frames.append(ack)
            receivedSinceAck = 0
        }
        while connection.writtenPending < pending.count {
            let message = pending[pending.startIndex + connection.writtenPending]
            var frame = ByteBuffer()
            frame.reserveCapacity(message.payload.readableBytes + 12 + message.recipients.count)
            var payload = message.payload
            if peerToPeer == true {
                let numbers = message.numbers.compactMap { player, number in
                    members.first { $0.playerID == player }.map { (index: $0.index, number: number) }
                }
                payload = ByteBuffer()
                PeerEnvelope(stream: senderStream, numbers: numbers.sorted { $0.index < $1.index }).write(to: &payload)
                payload.writeImmutableBuffer(message.payload)
            }
            RelayClientFrame.reliable(seq: message.seq, recipients: addressing(message.recipients), payload: payload).write(to: &frame)
            frames.append(frame)
            connection.writtenPending += 1
        }
        self.connection = connection
        return frames
    }

    // MARK: Direct paths

    /// This device's offer as a frame for the relay, when it has one and may send it.
    private var offerFrame: ByteBuffer? {
        guard peerToPeer == true, !relayOnly, let localOffer else { return nil }
        var frame = ByteBuffer()
        RelayClientFrame.peerOffer(localOffer).write(to: &frame)
        return frame
    }

    /// The UDP socket knows this device's addresses: the offer goes to the others now and on every new connection.
    mutating func setOffer(candidates: [PeerCandidate]) -> WriterWake? {
        guard localOffer == nil else { return nil }
        localOffer = peers.offer(candidates: candidates)
        guard connection != nil, let frame = offerFrame else { return nil }
        connection!.control.append(frame)
        return connection!.wake
    }

    /// Member `index` offered a direct path (ignored when this device keeps to the relay).
    mutating func peerOffered(_ offer: PeerOffer, by index: UInt8, now: Double) {
        guard peerToPeer == true, !relayOnly, let player = player(index), !player.isEmpty, members[Int(index)].state != .left else { return }
        _ = peers.offered(offer, by: player, now: now)
    }

    /// What the direct paths need at `now`: datagrams to send, and the relay's writer to wake when messages a path
    /// did not confirm were queued for the relay again (in number order, after what is queued).
    mutating func tickPeers(now: Double) -> (sends: [MatchPeers.Send], wake: WriterWake?, changes: [(String, PeerPath.Change)]) {
        let (sends, toRelay, changes) = peers.tick(now: now)
        for (player, messages) in toRelay {
            for message in messages {
                pending.append(Pending(seq: nextSeq, recipients: [player], numbers: [player: message.number], payload: message.payload))
                nextSeq += 1
                pendingBytes += message.payload.readableBytes
            }
        }
        return (sends, toRelay.isEmpty ? nil : connection?.wake, changes)
    }

    /// A reliable message the relay delivered from member `sender`: the messages it lets through to the game, in
    /// order (none when it overtook a missing one, or came both ways).
    mutating func relayedReliable(_ payload: ByteBuffer, from sender: UInt8) -> [Data] {
        guard peerToPeer == true else { return [Data(payload.readableBytesView)] }
        var payload = payload
        guard let player = player(sender), let envelope = try? PeerEnvelope.read(from: &payload) else { return [] }
        let data = Data(payload.readableBytesView)
        guard let localIndex, let number = envelope.number(for: localIndex) else { return [data] }
        if case .accepted(let messages) = peers.arrive(data, number: number, stream: envelope.stream, from: player) { return messages }
        return []
    }

    // MARK: Receiving

    /// The relay welcomed a new connection: resend what it does not have; returns the member changes to announce.
    mutating func welcomed(_ welcome: RelayWelcome, wake: WriterWake, now: Double) -> [RelayMember] {
        if welcome.receiverStream != receiverStream {
            receiverStream = welcome.receiverStream
            lastReceived = 0
        }
        acknowledge(through: welcome.acceptedSeq)
        connection = Connection(connectionID: welcome.connectionID, key: welcome.key, wake: wake)
        // The relay keeps a member's voice channels across its connections; telling them again costs nothing and
        // covers a relay that lost them.
        for (channel, membership) in voiceChannels.sorted(by: { $0.key < $1.key }) {
            var frame = ByteBuffer()
            RelayClientFrame.voiceChannel(membership: membership, channel: channel).write(to: &frame)
            connection!.control.append(frame)
        }
        localIndex = welcome.memberIndex
        if peerToPeer == nil { peerToPeer = welcome.peerToPeer }
        if let frame = offerFrame { connection!.control.append(frame) }
        rate = TokenBucket(rate: Double(welcome.maxMessagesPerSecond), burst: Double(welcome.burstMessages), now: now)
        var changes: [RelayMember] = []
        for member in welcome.members { changes += update(member) }
        return changes
    }

    /// A member's state as the relay announced it; returns it when it changed.
    mutating func update(_ member: RelayMember) -> [RelayMember] {
        while members.count <= Int(member.index) {
            members.append(RelayMember(index: UInt8(members.count), playerID: "", state: .expected))
        }
        let old = members[Int(member.index)]
        members[Int(member.index)] = member
        if member.state == .left {
            peers.remove(member.playerID)
            for channel in Array(voiceMembers.keys) {
                voiceMembers[channel]?.removeValue(forKey: member.index)
                if voiceMembers[channel]?.isEmpty == true { voiceMembers.removeValue(forKey: channel) }
            }
        }
        return old.playerID == member.playerID && old.state == member.state ? [] : [member]
    }

    /// The relay holds our reliable messages up to `seq`.
    mutating func acknowledge(through seq: UInt64) {
        while let first = pending.first, first.seq <= seq {
            pendingBytes -= first.payload.readableBytes
            pending.removeFirst()
            if let written = connection?.writtenPending, written > 0 { connection?.writtenPending = written - 1 }
        }
    }

    /// A reliable message arrived: true when it is new (a resent duplicate is dropped).
    mutating func received(seq: UInt64) -> Bool {
        guard seq > lastReceived else { return false }
        lastReceived = seq
        receivedSinceAck += 1
        return true
    }

    /// The player id of a member index.
    func player(_ index: UInt8) -> String? {
        Int(index) < members.count ? members[Int(index)].playerID : nil
    }
}
