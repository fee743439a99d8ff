import Crypto
import DequeModule
import Foundation
import GameCenterProtocol
import NIOCore

/// A device's direct paths to the other members of a match, without I/O: each peer's keys and ``PeerPath``, the
/// numbering of reliable messages per recipient (shared by both paths), what a direct path has not confirmed yet,
/// and the order reliable messages are handed to the game in, whichever way each came.
///
/// Reliable messages to a peer are numbered 1, 2, 3… in this device's stream. While the path is direct they go by
/// UDP, are acknowledged one by one and resent until they are; through the relay they carry their numbers in a
/// ``PeerEnvelope``. When a direct path goes silent, what it did not confirm goes through the relay again. The
/// receiver hands messages over in number order, holding those that overtook a missing one, and drops copies.
struct MatchPeers {
    /// A datagram to seal and send to one peer.
    struct Send: Sendable {
        var address: PeerCandidate
        var header: RelayDatagramHeader
        var key: RelayKey
        var body: ByteBuffer
    }

    /// A reliable message sent directly and not confirmed yet.
    struct Unconfirmed {
        var number: UInt64
        var payload: ByteBuffer
        var sentAt: Double
    }

    /// One other member this device has an offer from.
    struct Link {
        let playerID: String
        let stream: UInt64
        let keys: PeerKeys
        var path = PeerPath()
        var counter: UInt64 = 0
        var replay = ReplayWindow()
        var unconfirmed: Deque<Unconfirmed> = []
        var unconfirmedBytes = 0
    }

    /// The order of one sender's reliable messages to this device.
    struct Inbound {
        var stream: UInt64
        var expected: UInt64 = 1
        var held: [UInt64: Data] = [:]
        var heldBytes = 0
    }

    /// What became of a reliable message that arrived.
    enum Arrival: Equatable {
        /// New: these messages (it, and any it let through) go to the game, in order.
        case accepted([Data])
        /// Already had it.
        case duplicate
        /// Too much is held waiting for a missing message: not taken (the sender sends it again).
        case refused
    }

    let matchID: String
    let localPlayerID: String
    /// This device's stream (its relay sender stream).
    let stream: UInt64
    let privateKey = Curve25519.KeyAgreement.PrivateKey()
    /// Peers with an offer, by player id.
    private(set) var links: [String: Link] = [:]
    /// Player ids by their stream, for finding a datagram's link.
    private var streams: [UInt64: String] = [:]
    /// The next number of a reliable message to each player.
    private var nextNumber: [String: UInt64] = [:]
    private var inbound: [String: Inbound] = [:]

    /// A reliable message a direct path takes at most (larger ones go through the relay, numbered alike).
    static let maximumDirectReliableBytes = 1_200
    /// How long a direct reliable message waits for its acknowledgement before it is sent again.
    static let resendAfter = 0.2
    /// Most messages held for a missing one, per sender, and their bytes.
    static let maximumHeldMessages = 4_096
    static let maximumHeldBytes = 8 << 20

    init(matchID: String, localPlayerID: String, stream: UInt64) {
        self.matchID = matchID
        self.localPlayerID = localPlayerID
        self.stream = stream
    }

    /// This device's offer for the others: its public key and `candidates`.
    func offer(candidates: [PeerCandidate]) -> PeerOffer {
        PeerOffer(stream: stream, publicKey: Array(privateKey.publicKey.rawRepresentation), candidates: candidates)
    }

    // MARK: Offers and paths

    /// `playerID` offered a direct path; false when its key is unusable. A new stream (a new `GKMatch` on its side)
    /// starts a new link.
    mutating func offered(_ offer: PeerOffer, by playerID: String, now: Double) -> Bool {
        if let link = links[playerID], link.stream == offer.stream {
            links[playerID]!.path.offered(offer.candidates, now: now)
            return true
        }
        guard playerID != localPlayerID,
            let keys = PeerKeys(
                privateKey: privateKey, peerPublicKey: offer.publicKey, matchID: matchID, localPlayerID: localPlayerID, peerPlayerID: playerID)
        else { return false }
        if let old = links[playerID] { streams.removeValue(forKey: old.stream) }
        var link = Link(playerID: playerID, stream: offer.stream, keys: keys)
        link.path.offered(offer.candidates, now: now)
        links[playerID] = link
        streams[offer.stream] = playerID
        return true
    }

    /// `playerID` left the match: its path and numbering are forgotten.
    mutating func remove(_ playerID: String) {
        if let link = links.removeValue(forKey: playerID) { streams.removeValue(forKey: link.stream) }
        inbound.removeValue(forKey: playerID)
    }

    /// The address messages to `playerID` go to directly; nil: through the relay.
    func directAddress(of playerID: String) -> PeerCandidate? {
        links[playerID]?.path.directAddress
    }

    /// How soon ``tick(now:)`` is next needed: often while a path is being probed or a direct message waits for its
    /// acknowledgement, else now and then (an offer also ticks at once).
    var tickInterval: Duration {
        let busy = links.values.contains { link in
            if case .probing = link.path.state { return true }
            return !link.unconfirmed.isEmpty
        }
        return busy ? .milliseconds(20) : .milliseconds(100)
    }

    /// Bytes of direct reliable messages not confirmed yet.
    var unconfirmedBytes: Int {
        links.values.reduce(0) { $0 + $1.unconfirmedBytes }
    }

    /// What is due at `now`: probes, resends, and the messages of paths that fell back to the relay (to send
    /// through it, in number order, by player).
    mutating func tick(now: Double) -> (sends: [Send], toRelay: [(playerID: String, messages: [Unconfirmed])], changes: [(String, PeerPath.Change)]) {
        var sends: [Send] = []
        var toRelay: [(String, [Unconfirmed])] = []
        var changes: [(String, PeerPath.Change)] = []
        for playerID in links.keys.sorted() {
            var link = links[playerID]!
            let (probes, change) = link.path.tick(now: now)
            for address in probes { sends.append(seal(&link, .peerProbe, body: ByteBuffer(), to: address)) }
            if change == .relay {
                changes.append((playerID, change))
                if !link.unconfirmed.isEmpty { toRelay.append((playerID, Array(link.unconfirmed))) }
                link.unconfirmed.removeAll()
                link.unconfirmedBytes = 0
            } else if let address = link.path.directAddress {
                for i in link.unconfirmed.indices where now - link.unconfirmed[i].sentAt >= Self.resendAfter {
                    link.unconfirmed[i].sentAt = now
                    let message = link.unconfirmed[i]
                    sends.append(seal(&link, .peerReliable, body: Self.reliableBody(message.number, message.payload), to: address))
                }
            }
            links[playerID] = link
        }
        return (sends, toRelay, changes)
    }

    private static func reliableBody(_ number: UInt64, _ payload: ByteBuffer) -> ByteBuffer {
        var body = ByteBuffer()
        body.reserveCapacity(8 + payload.readableBytes)
        body.writeInteger(number)
        body.writeImmutableBuffer(payload)
        return body
    }

    private func seal(_ link: inout Link, _ kind: RelayDatagramKind, body: ByteBuffer, to address: PeerCandidate) -> Send {
        link.counter += 1
        return Send(address: address, header: RelayDatagramHeader(kind: kind, connectionID: stream, counter: link.counter), key: link.keys.send, body: body)
    }

    // MARK: Sending

    /// The number of the next reliable message to `playerID`.
    mutating func number(to playerID: String) -> UInt64 {
        let number = nextNumber[playerID, default: 1]
        nextNumber[playerID] = number + 1
        return number
    }

    /// Sends reliable message `number` to `playerID` directly, kept until confirmed; nil when the path is not direct
    /// or the message is too large for it (it goes through the relay).
    mutating func sendReliable(_ payload: ByteBuffer, number: UInt64, to playerID: String, now: Double) -> Send? {
        guard payload.readableBytes <= Self.maximumDirectReliableBytes, var link = links[playerID], let address = link.path.directAddress else {
            return nil
        }
        link.unconfirmed.append(Unconfirmed(number: number, payload: payload, sentAt: now))
        link.unconfirmedBytes += payload.readableBytes
        let send = seal(&link, .peerReliable, body: Self.reliableBody(number, payload), to: address)
        links[playerID] = link
        return send
    }

    /// Sends an unreliable message to `playerID` directly; nil when the path is not direct.
    mutating func sendUnreliable(_ payload: ByteBuffer, to playerID: String) -> Send? {
        guard var link = links[playerID], let address = link.path.directAddress else { return nil }
        let send = seal(&link, .peerData, body: payload, to: address)
        links[playerID] = link
        return send
    }

    // MARK: Receiving

    /// What a datagram from a peer asks for.
    struct Received {
        /// Messages for the game from `from`, in order.
        var deliveries: [Data] = []
        var from: String?
        /// Answers to send.
        var replies: [Send] = []
        /// The path to `from` changed.
        var change: PeerPath.Change = .none
    }

    /// The link a datagram's header names (by the sender's stream), for opening it.
    func key(for header: RelayDatagramHeader) -> RelayKey? {
        guard header.kind.isPeer, let playerID = streams[header.connectionID] else { return nil }
        return links[playerID]?.keys.receive
    }

    /// A peer datagram that opened with `key(for:)`'s key, its body and where it came from.
    mutating func received(_ header: RelayDatagramHeader, body: UnsafeRawBufferPointer, from address: PeerCandidate, now: Double) -> Received {
        var result = Received()
        guard let playerID = streams[header.connectionID], var link = links[playerID], link.replay.accept(header.counter) else { return result }
        result.from = playerID
        switch header.kind {
        case .peerProbe:
            link.path.probed(from: address, now: now)
            result.replies.append(seal(&link, .peerProbeAck, body: ByteBuffer(), to: address))
        case .peerProbeAck:
            result.change = link.path.answered(from: address, now: now)
        case .peerData:
            result.deliveries = [Data(body)]
        case .peerReliable:
            guard body.count >= 8 else { break }
            let number = UInt64(bigEndian: body.loadUnaligned(as: UInt64.self))
            let arrival = arrive(Data(body[8...]), number: number, stream: link.stream, from: playerID)
            if case .accepted(let messages) = arrival { result.deliveries = messages }
            if arrival != .refused {
                var ack = ByteBuffer()
                ack.writeInteger(number)
                ack.writeInteger(inbound[playerID]!.expected - 1)
                result.replies.append(seal(&link, .peerAck, body: ack, to: address))
            }
        case .peerAck:
            guard body.count >= 16 else { break }
            let number = UInt64(bigEndian: body.loadUnaligned(as: UInt64.self))
            let through = UInt64(bigEndian: body.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            link.unconfirmed.removeAll { message in
                guard message.number <= through || message.number == number else { return false }
                link.unconfirmedBytes -= message.payload.readableBytes
                return true
            }
        default:
            break
        }
        links[playerID] = link
        return result
    }

    /// Reliable message `number` of `stream` from `playerID` arrived (by either path).
    mutating func arrive(_ payload: Data, number: UInt64, stream: UInt64, from playerID: String) -> Arrival {
        var order = inbound[playerID] ?? Inbound(stream: stream)
        if order.stream != stream { order = Inbound(stream: stream) }
        defer { inbound[playerID] = order }
        guard number >= order.expected, order.held[number] == nil else { return .duplicate }
        guard number == order.expected else {
            guard order.held.count < Self.maximumHeldMessages, order.heldBytes + payload.count <= Self.maximumHeldBytes else { return .refused }
            order.held[number] = payload
            order.heldBytes += payload.count
            return .accepted([])
        }
        var messages = [payload]
        order.expected += 1
        while let next = order.held.removeValue(forKey: order.expected) {
            order.heldBytes -= next.count
            messages.append(next)
            order.expected += 1
        }
        return .accepted(messages)
    }
}
