import GameCenterProtocol
import NIOCore
import Testing

/// The direct-path parts of the relay protocol: offers, their candidates, envelopes and the welcome's flag.
@Suite struct PeerOfferTests {
    @Test func anOfferMatchesItsLayout() throws {
        let offer = PeerOffer(stream: 5, publicKey: [UInt8](repeating: 7, count: 32), candidates: [PeerCandidate(address: [10, 0, 0, 1], port: 0x1F90)!])
        var expected: [UInt8] = [0x18, 0, 0, 0, 0, 0, 0, 0, 5] + [UInt8](repeating: 7, count: 32)
        expected += [1, 4, 10, 0, 0, 1, 0x1F, 0x90]
        #expect(Array(encoded(RelayClientFrame.peerOffer(offer)).readableBytesView) == expected)
        #expect(try RelayClientFrame.read(from: ByteBuffer(bytes: expected)) == .peerOffer(offer))
        var relayed = expected
        relayed[0] = 0x0B
        relayed.insert(3, at: 1)
        #expect(try RelayServerFrame.read(from: ByteBuffer(bytes: relayed)) == .peerOffer(sender: 3, offer))
    }

    @Test func badCandidatesAndTooManyAreRefused() {
        let head: [UInt8] = [0x18, 0, 0, 0, 0, 0, 0, 0, 5] + [UInt8](repeating: 7, count: 32)
        #expect(throws: RelayWireError.invalidValue("address family 5")) {
            try RelayClientFrame.read(from: ByteBuffer(bytes: head + [1, 5, 10, 0, 0, 1, 0, 1]))
        }
        #expect(throws: RelayWireError.invalidValue("port 0")) {
            try RelayClientFrame.read(from: ByteBuffer(bytes: head + [1, 4, 10, 0, 0, 1, 0, 0]))
        }
        #expect(throws: RelayWireError.invalidValue("17 peer candidates (at most 16)")) {
            try RelayClientFrame.read(from: ByteBuffer(bytes: head + [17]))
        }
        #expect(throws: RelayWireError.truncated) {
            try RelayClientFrame.read(from: ByteBuffer(bytes: head + [1, 6, 1, 2, 3]))
        }
        #expect(PeerCandidate(address: [1, 2, 3], port: 1) == nil)
    }

    @Test(arguments: [[127, 0, 0, 1], [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [2]] as [[UInt8]])
    func aCandidateBecomesASocketAddressAndBack(_ address: [UInt8]) {
        let candidate = PeerCandidate(address: address, port: 4242)!
        #expect(PeerCandidate(candidate.datagramAddress) == candidate)
        #expect(candidate.datagramAddress.socketAddress.port == 4242)
    }

    @Test func anEnvelopeRoundTripsAndLeavesThePayload() throws {
        let envelope = PeerEnvelope(stream: 9, numbers: [(index: 1, number: 3), (index: 4, number: .max)])
        var buffer = ByteBuffer()
        envelope.write(to: &buffer)
        buffer.writeString("game data")
        #expect(buffer.readableBytes == 8 + 1 + 2 * 9 + 9)
        let read = try PeerEnvelope.read(from: &buffer)
        #expect(read == envelope)
        #expect(read.number(for: 4) == .max)
        #expect(read.number(for: 2) == nil)
        #expect(String(buffer: buffer) == "game data")
        var short = ByteBuffer(bytes: [0, 0, 0, 0, 0, 0, 0, 9, 2, 1])
        #expect(throws: RelayWireError.truncated) { try PeerEnvelope.read(from: &short) }
    }

    @Test func theWelcomeSaysWhetherThePathsMayBeDirect() throws {
        for peerToPeer in [true, false] {
            var relayOnly = welcome(members: smallMembers)
            relayOnly.peerToPeer = peerToPeer
            guard case .welcome(let read) = try RelayServerFrame.read(from: encoded(.welcome(relayOnly))) else {
                Issue.record("not a welcome")
                return
            }
            #expect(read.peerToPeer == peerToPeer)
        }
        var bytes = encoded(RelayServerFrame.welcome(welcome(members: smallMembers)))
        bytes.setInteger(UInt8(2), at: bytes.writerIndex - 1)
        #expect(throws: RelayWireError.invalidValue("welcome flags 2")) { try RelayServerFrame.read(from: bytes) }
    }
}
