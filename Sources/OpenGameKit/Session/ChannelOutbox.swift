import NIOCore
import Synchronization

/// Batches writes to one channel: callers on any thread append messages; the first message into an empty
/// outbox schedules one task on the channel's event loop that writes everything queued by then and flushes
/// once. A sender faster than the socket costs one event-loop hop and one flush (for UDP one `sendmmsg`) per
/// batch, not per message. Counts the bytes queued and not yet written.
final class ChannelOutbox<Message: Sendable>: Sendable {
    /// The channel.
    let channel: any Channel
    /// Bytes queued and not yet written to the socket.
    let pendingBytes = Atomic<Int>(0)

    private struct Queue {
        var messages: [(message: Message, size: Int)] = []
        var isDrainScheduled = false
    }

    private let queue = Mutex(Queue())

    /// An outbox for `channel`.
    init(channel: any Channel) {
        self.channel = channel
    }

    /// Queues `message` (`size` bytes). Messages go out in the order of the calls.
    func write(_ message: Message, size: Int) {
        pendingBytes.add(size, ordering: .relaxed)
        let schedule = queue.withLock { queue in
            queue.messages.append((message, size))
            defer { queue.isDrainScheduled = true }
            return !queue.isDrainScheduled
        }
        if schedule {
            channel.eventLoop.execute { self.drain() }
        }
    }

    /// Writes what is queued, then closes the channel once all of it has been written.
    func closeAfterFlush() {
        channel.eventLoop.execute {
            self.drain()
            let channel = self.channel
            channel.writeAndFlush(channel.allocator.buffer(capacity: 0)).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }

    /// Writes the queued messages and flushes once; runs on the event loop.
    private func drain() {
        let messages = queue.withLock { queue in
            queue.isDrainScheduled = false
            let messages = queue.messages
            queue.messages = []
            return messages
        }
        guard let last = messages.last else { return }
        var total = 0
        for (message, size) in messages.dropLast() {
            total += size
            channel.write(message, promise: nil)
        }
        total += last.size
        // Writes complete in order, so the last one's completion accounts for the whole batch.
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(last.message, promise: promise)
        promise.futureResult.whenComplete { [total] _ in
            self.pendingBytes.subtract(total, ordering: .relaxed)
        }
    }
}
