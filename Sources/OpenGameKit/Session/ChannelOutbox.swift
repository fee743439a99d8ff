import NIOCore
import Synchronization

/// Batches the sealed records of one session TCP channel. Callers on any thread encode their frames straight into
/// one pending buffer, where each is sealed in place (``SessionRecordSealer``); the first write into an empty outbox
/// schedules one task on the channel's event loop that hands the whole buffer to the channel and flushes once. A
/// written buffer comes back as the next pending one, so a steady stream of messages reuses two buffers instead of
/// allocating (and page-faulting in) one per message. Counts the bytes queued and not yet written.
///
/// Nothing is written before ``startSealing(with:)``: no frame ever goes out in clear. (The clear handshake before it
/// is written by ``SessionConnectionHandler``.)
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
        /// Seals every record, once the handshake agreed on keys.
        var sealer: SessionRecordSealer?
    }

    private let buffers: Mutex<Buffers>

    /// An outbox for `channel`.
    init(channel: any Channel) {
        self.channel = channel
        buffers = Mutex(Buffers(pending: channel.allocator.buffer(capacity: 0)))
    }

    /// Seals everything written from now on with `sealer`, after the empty confirmation record it queues first.
    func startSealing(with sealer: SessionRecordSealer) {
        append { buffers in
            buffers.sealer = sealer
            return buffers.sealer!.write(into: &buffers.pending) { _ in }
        }
    }

    /// Appends one sealed record whose frame `encode` writes to the buffer it is given. Writes go out in the order of
    /// the calls. Before ``startSealing(with:)`` nothing is written; once the sealer has used its last record number
    /// nothing is written either, and the channel is closed.
    func write(_ encode: (inout ByteBuffer) -> Void) {
        append { buffers in
            guard buffers.sealer != nil else { return true }
            return buffers.sealer!.write(into: &buffers.pending, encode)
        }
    }

    /// Runs `body` on the buffers under the lock, counts the bytes it appended and schedules a drain for them; closes
    /// the channel when `body` returns false.
    private func append(_ body: (inout Buffers) -> Bool) {
        let (schedule, sealed) = buffers.withLock { buffers in
            let start = buffers.pending.writerIndex
            let sealed = body(&buffers)
            let added = buffers.pending.writerIndex - start
            guard added > 0 else { return (false, sealed) }
            pendingBytes.add(added, ordering: .relaxed)
            defer { buffers.isDrainScheduled = true }
            return (!buffers.isDrainScheduled, sealed)
        }
        if schedule {
            channel.eventLoop.execute { self.drain() }
        }
        if !sealed {
            channel.close(promise: nil)
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
