import NetworkFaultProxy
import NIOCore
import NIOPosix
import Synchronization

/// A TCP client that collects every byte it receives and notes when its connection closes.
final class TCPTestClient: Sendable {
    /// Feeds what the channel reads, and its close, into the client's state.
    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        private let client: TCPTestClient

        init(client: TCPTestClient) {
            self.client = client
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            client.state.withLock { $0.received.append(contentsOf: bytes.readableBytesView) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            client.state.withLock { $0.isClosed = true }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }

    /// What the lock protects.
    private struct State {
        var received: [UInt8] = []
        var isClosed = false
        var channel: (any Channel)?
    }

    private let state = Mutex(State())

    private init() {}

    /// Connects to 127.0.0.1:`port`.
    static func connect(port: Int) async throws -> TCPTestClient {
        let client = TCPTestClient()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Collector(client: client))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        client.state.withLock { $0.channel = channel }
        return client
    }

    /// Connects to `port` and reports whether the connection was refused: the connect failed, or the connection
    /// closed within `timeout`.
    static func isRefused(port: Int, within timeout: Duration = .seconds(5)) async -> Bool {
        guard let client = try? await connect(port: port) else { return true }
        let closed = (try? await client.waitForClose(within: timeout)) != nil
        await client.close()
        return closed
    }

    /// Bytes received so far.
    var received: [UInt8] {
        state.withLock { $0.received }
    }

    /// Whether the connection has closed.
    var isClosed: Bool {
        state.withLock { $0.isClosed }
    }

    /// Writes `bytes` and waits until they are handed to the kernel.
    func send(_ bytes: [UInt8]) async throws {
        let channel = state.withLock { $0.channel }
        try await channel?.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    /// Waits until at least `count` bytes were received; throws `WaitTimeout` after `timeout`.
    func waitForBytes(_ count: Int, within timeout: Duration = .seconds(10)) async throws {
        try await waitUntil("\(count) bytes received", within: timeout) { state.withLock { $0.received.count } >= count }
    }

    /// Waits until the connection has closed; throws `WaitTimeout` after `timeout`.
    func waitForClose(within timeout: Duration = .seconds(10)) async throws {
        try await waitUntil("the connection closed", within: timeout) { isClosed }
    }

    /// Closes the connection.
    func close() async {
        let channel = state.withLock { $0.channel }
        try? await channel?.close()
    }
}
