import NIOCore
import NIOEmbedded
import OpenGameKitSessionWire
import Testing
@testable import OpenGameKit

/// The NIO edge of a session connection when the peer fails authentication.
@Suite("Session connection handler")
struct SessionConnectionHandlerTests {
    /// Refuses writes once the channel is closed, as a socket does (`EmbeddedChannel` would record them anyway).
    final class SocketLikeWrites: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard context.channel.isActive else {
                promise?.fail(ChannelError.ioOnClosedChannel)
                return
            }
            context.write(data, promise: promise)
        }
    }

    /// The race a loaded machine showed: the peer's handshake and its confirmation arrive in one read. The handler
    /// agrees the keys (queueing its own confirmation) and then finds that the peer's confirmation does not open.
    /// It must close only after its own confirmation went out, so the peer learns of the mismatch as an
    /// authentication failure, not as a connection closed mid-handshake.
    @Test func aFailedConfirmationClosesOnlyAfterOursWentOut() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let outbox = ChannelOutbox(channel: channel)
        let ours = try SessionPassphrase("correct horse battery", sessionID: "race")
        let theirs = try SessionPassphrase("incorrect horse battery", sessionID: "race")
        let handler = SessionConnectionHandler(
            inbox: SessionInbox(), id: ConnectionID(rawValue: 1), outbox: outbox, security: SessionChannelSecurity(role: .responder, passphrase: ours))
        try channel.pipeline.syncOperations.addHandler(SocketLikeWrites())
        try channel.pipeline.syncOperations.addHandler(handler)

        // The peer reads our handshake and agrees its keys (with another passphrase).
        var peer = SessionChannelSecurity(role: .initiator, passphrase: theirs)
        var fromUs = SessionRecordDecoder()
        fromUs.feed(try #require(try channel.readOutbound(as: ByteBuffer.self)))
        guard case .keysAgreed(var peerSealer)? = try fromUs.next({ record throws(SessionProtocolError) in try peer.receive(record) }) else {
            Issue.record("our handshake did not give the peer its keys")
            return
        }
        // Its handshake and confirmation, in one buffer.
        var both = channel.allocator.buffer(capacity: 256)
        peer.handshake.write(to: &both)
        _ = peerSealer.write(into: &both) { _ in }
        try channel.writeInbound(both)
        channel.embeddedEventLoop.run()

        var written: [ByteBuffer] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { written.append(buffer) }
        #expect(!channel.isActive, "a confirmation that does not open must close the connection")
        #expect(!written.isEmpty, "the connection closed before our confirmation went out")
        for buffer in written { fromUs.feed(buffer) }
        #expect(throws: SessionProtocolError.authenticationFailed) {
            _ = try fromUs.next({ record throws(SessionProtocolError) in try peer.receive(record) })
        }
    }
}
