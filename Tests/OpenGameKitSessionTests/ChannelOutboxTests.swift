import NIOCore
import NIOEmbedded
import Testing
@testable import OpenGameKit

@Suite("Channel outbox")
struct ChannelOutboxTests {
    @Test func writesFromOneBatchGoOutInOrderWithOneFlushAndAreCounted() throws {
        let channel = EmbeddedChannel()
        let outbox = ChannelOutbox<ByteBuffer>(channel: channel)
        for value in 0..<5 { outbox.write(ByteBuffer(bytes: [UInt8(value)]), size: 1) }
        #expect(outbox.pendingBytes.load(ordering: .relaxed) == 5)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)  // nothing before the event loop runs
        channel.embeddedEventLoop.run()
        var received: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { received += Array(buffer.readableBytesView) }
        #expect(received == [0, 1, 2, 3, 4])
        #expect(outbox.pendingBytes.load(ordering: .relaxed) == 0)
        _ = try channel.finish()
    }

    @Test func closeAfterFlushWritesWhatWasQueuedFirst() throws {
        let channel = EmbeddedChannel()
        let outbox = ChannelOutbox<ByteBuffer>(channel: channel)
        outbox.write(ByteBuffer(bytes: [9]), size: 1)
        outbox.closeAfterFlush()
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [9]))
        #expect(!channel.isActive)
    }
}
