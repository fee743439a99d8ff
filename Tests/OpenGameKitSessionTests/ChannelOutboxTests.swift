import NIOCore
import NIOEmbedded
import Testing
@testable import OpenGameKit

@Suite("Channel outbox")
struct ChannelOutboxTests {
    @Test func writesFromOneBatchGoOutInOrderWithOneFlushAndAreCounted() throws {
        let channel = EmbeddedChannel()
        let outbox = ChannelOutbox(channel: channel)
        for value in 0..<5 { outbox.write { $0.writeInteger(UInt8(value)) } }
        #expect(outbox.pendingBytes.load(ordering: .relaxed) == 5)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)  // nothing before the event loop runs
        channel.embeddedEventLoop.run()
        var received: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { received += Array(buffer.readableBytesView) }
        #expect(received == [0, 1, 2, 3, 4])
        #expect(outbox.pendingBytes.load(ordering: .relaxed) == 0)
        _ = try channel.finish()
    }

    @Test func laterBatchesGoOutAfterEarlierOnesWhole() throws {
        let channel = EmbeddedChannel()
        let outbox = ChannelOutbox(channel: channel)
        var expected: [UInt8] = []
        for batch in 0..<4 {
            for index in 0..<3 {
                let bytes = [UInt8](repeating: UInt8(batch * 3 + index), count: 1_000 * (index + 1))
                expected += bytes
                outbox.write { $0.writeBytes(bytes) }
            }
            channel.embeddedEventLoop.run()
        }
        var received: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { received += Array(buffer.readableBytesView) }
        #expect(received == expected)
        #expect(outbox.pendingBytes.load(ordering: .relaxed) == 0)
        _ = try channel.finish()
    }

    @Test func closeAfterFlushWritesWhatWasQueuedFirst() throws {
        let channel = EmbeddedChannel()
        let outbox = ChannelOutbox(channel: channel)
        outbox.write { $0.writeInteger(UInt8(9)) }
        outbox.closeAfterFlush()
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [9]))
        #expect(!channel.isActive)
    }
}
