import Crypto
import Foundation
import GameCenterProtocol
import NIOCore
import NIOEmbedded
import OpenGameKitSessionWire
import Testing
@testable import OpenGameKit

@Suite("Channel outbox")
struct ChannelOutboxTests {
    @Test func writesFromOneBatchGoOutSealedInOrderWithOneFlushAndAreCounted() throws {
        let channel = EmbeddedChannel()
        let outbox = ChannelOutbox(channel: channel)
        var receiver = try sealing(outbox)
        for value in 0..<5 { outbox.write(SessionFrame.data(Data([UInt8(value)])).encode) }
        #expect(outbox.pendingBytes.load(ordering: .relaxed) == 20 + 5 * (SessionRecord.dataOverhead + 1))  // the confirmation first
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)  // nothing before the event loop runs
        channel.embeddedEventLoop.run()
        var frames: [SessionFrame] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { frames += try receiver.receive(buffer) }
        #expect(frames == (0..<5).map { .data(Data([UInt8($0)])) })
        #expect(outbox.pendingBytes.load(ordering: .relaxed) == 0)
        _ = try channel.finish()
    }

    @Test func laterBatchesGoOutAfterEarlierOnesWhole() throws {
        let channel = EmbeddedChannel()
        let outbox = ChannelOutbox(channel: channel)
        var receiver = try sealing(outbox)
        var expected: [SessionFrame] = []
        for batch in 0..<4 {
            for index in 0..<3 {
                let frame = SessionFrame.data(Data(repeating: UInt8(batch * 3 + index), count: 1_000 * (index + 1)))
                expected.append(frame)
                outbox.write(frame.encode)
            }
            channel.embeddedEventLoop.run()
        }
        var frames: [SessionFrame] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { frames += try receiver.receive(buffer) }
        #expect(frames == expected)
        #expect(outbox.pendingBytes.load(ordering: .relaxed) == 0)
        _ = try channel.finish()
    }

    @Test func closeAfterFlushWritesWhatWasQueuedFirst() throws {
        let channel = EmbeddedChannel()
        let outbox = ChannelOutbox(channel: channel)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        var receiver = try sealing(outbox)
        outbox.write(SessionFrame.goodbye.encode)
        #expect(channel.isActive)
        outbox.closeAfterFlush()
        channel.embeddedEventLoop.run()
        let written = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(try receiver.receive(written) == [.goodbye])
        #expect(!channel.isActive)
    }

    @Test func nothingGoesOutBeforeSealingStarts() throws {
        let channel = EmbeddedChannel()
        let outbox = ChannelOutbox(channel: channel)
        outbox.write(SessionFrame.data(Data("in clear?".utf8)).encode)
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        #expect(outbox.pendingBytes.load(ordering: .relaxed) == 0)
        _ = try channel.finish()
    }

    @Test func aSealerOutOfRecordNumbersClosesTheChannel() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let outbox = ChannelOutbox(channel: channel)
        outbox.startSealing(with: SessionRecordSealer(cipher: ChaChaPolyCipher(key: SymmetricKey(size: .bits256)), counter: .max - 1))
        channel.embeddedEventLoop.run()
        #expect(channel.isActive)  // the confirmation took the last number but one
        outbox.write(SessionFrame.heartbeat.encode)
        channel.embeddedEventLoop.run()
        #expect(!channel.isActive)
    }

    /// Starts `outbox` sealing with fresh keys; returns the other side's reader, which expects the confirmation
    /// record first.
    private func sealing(_ outbox: ChannelOutbox) throws -> SealedStream {
        let keys = try SessionKeysFixture()
        outbox.startSealing(with: keys.initiator.recordSealer)
        return SealedStream(sealer: keys.initiator.recordSealer, opener: keys.responder.recordOpener, confirmationFirst: true)
    }
}
