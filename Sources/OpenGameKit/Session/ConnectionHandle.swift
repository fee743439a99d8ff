import NIOCore
import Synchronization

/// A session's grip on one TCP channel, with the number of bytes written to it but not yet sent.
final class ConnectionHandle: Sendable {
    /// The channel.
    let channel: any Channel
    /// Bytes queued on the channel and not yet written to the socket.
    let pendingBytes = Atomic<Int>(0)

    /// Wraps `channel`.
    init(channel: any Channel) {
        self.channel = channel
    }

    /// Queues `bytes` on the channel, counting them until they are written. Call on any thread.
    func write(_ bytes: [UInt8]) {
        pendingBytes.add(bytes.count, ordering: .relaxed)
        let buffer = channel.allocator.buffer(bytes: bytes)
        channel.writeAndFlush(buffer).whenComplete { [self] _ in
            pendingBytes.subtract(bytes.count, ordering: .relaxed)
        }
    }

    /// Closes the channel once everything queued before has been written.
    func closeAfterFlush() {
        let channel = self.channel
        channel.writeAndFlush(channel.allocator.buffer(capacity: 0)).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
