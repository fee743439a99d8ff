import NIOCore
import Synchronization

/// Batches writes to one TCP channel. Callers on any thread encode their frames straight into one pending buffer;
/// the first write into an empty outbox schedules one task on the channel's event loop that hands the whole buffer
/// to the channel and flushes once. A written buffer comes back as the next pending one, so a steady stream of
/// messages reuses two buffers instead of allocating (and page-faulting in) one per message. Counts the bytes
/// queued and not yet written.
final class ChannelOutbox: Sendable {
    /// The channel.
    let channel: any Channel
    /// Bytes queued and not yet written to the socket.
    let pendingBytes = Atomic<Int>(0)

    /// A written buffer larger than this is let go instead of reused, so a burst does not pin its memory.
    static let maxReusedCapacity = 1024 * 1024

    private struct Buffers {
        /// What callers have written since the last drain.
        var pending: ByteBuffer
        /// A buffer the channel has finished writing, to become the next `pending`.
        var spare: ByteBuffer?
        var isDrainScheduled = false
    }

    private let buffers: Mutex<Buffers>

    /// An outbox for `channel`.
    init(channel: any Channel) {
        self.channel = channel
        buffers = Mutex(Buffers(pending: channel.allocator.buffer(capacity: 0)))
    }

    /// Appends what `encode` writes to the buffer it is given. Writes go out in the order of the calls.
    func write(_ encode: (inout ByteBuffer) -> Void) {
        let schedule = buffers.withLock { buffers in
            let start = buffers.pending.writerIndex
            encode(&buffers.pending)
            pendingBytes.add(buffers.pending.writerIndex - start, ordering: .relaxed)
            defer { buffers.isDrainScheduled = true }
            return !buffers.isDrainScheduled
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

    /// Hands the pending buffer to the channel and flushes; runs on the event loop.
    private func drain() {
        let batch = buffers.withLock { buffers in
            buffers.isDrainScheduled = false
            let batch = buffers.pending
            // `clear()` keeps the storage when nothing else refers to it any more (the channel let go of it).
            var next = buffers.spare ?? channel.allocator.buffer(capacity: 0)
            buffers.spare = nil
            next.clear()
            buffers.pending = next
            return batch
        }
        let size = batch.readableBytes
        guard size > 0 else { return }
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(batch, promise: promise)
        promise.futureResult.whenComplete { _ in
            self.pendingBytes.subtract(size, ordering: .relaxed)
            guard batch.capacity <= Self.maxReusedCapacity else { return }
            self.buffers.withLock { $0.spare = batch }
        }
    }
}
