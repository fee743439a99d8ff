import GameCenterProtocol
import Logging
import NIOCore
import Synchronization

/// The socket side shared by ``ServiceAdvertiser`` and ``ServiceBrowser``: one ``MulticastSocket`` whose
/// datagrams are parsed as DNS messages and handed to the owner in arrival order. Malformed packets are
/// dropped, logged and counted; failed sends are logged (mDNS is best effort and retries on its own schedule).
final class MDNSTransport: Sendable {
    /// The socket.
    let socket: MulticastSocket

    private let logger: Logger
    private let malformed = Atomic<Int>(0)
    private let receiveTask = Mutex<Task<Void, Never>?>(nil)

    private init(socket: MulticastSocket, logger: Logger) {
        self.socket = socket
        self.logger = logger
    }

    /// Opens the socket and starts receiving: `onMessage` is called for each well-formed message, one at a
    /// time, until ``close()``.
    static func open(
        interfaceName: String?,
        port: Int,
        logger: Logger,
        onMessage: @escaping @Sendable (DNSMessage, SocketAddress) async -> Void
    ) async throws -> MDNSTransport {
        let socket = try await MulticastSocket.open(interfaceName: interfaceName, port: port, logger: logger)
        let transport = MDNSTransport(socket: socket, logger: logger)
        let task = Task { [weak transport] in
            for await datagram in socket.datagrams {
                guard let message = transport?.parse(datagram) else { continue }
                await onMessage(message, datagram.source)
            }
        }
        transport.receiveTask.withLock { $0 = task }
        return transport
    }

    /// The number of received datagrams that failed to parse.
    var malformedPacketCount: Int { malformed.load(ordering: .relaxed) }

    /// Sends `message` to the mDNS group, or to `destination` for a unicast reply.
    func send(_ message: DNSMessage, to destination: SocketAddress? = nil) async {
        do {
            try await socket.send(message.encoded(), to: destination)
        } catch {
            logger.warning("mDNS send failed", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// Stops receiving and closes the socket.
    func close() async {
        receiveTask.withLock { $0 }?.cancel()
        await socket.close()
    }

    private func parse(_ datagram: ReceivedDatagram) -> DNSMessage? {
        do {
            return try DNSMessage(bytes: datagram.bytes)
        } catch {
            malformed.add(1, ordering: .relaxed)
            logger.debug("dropped malformed mDNS packet", metadata: [LogKey.source: "\(datagram.source)", LogKey.error: "\(error)"])
            return nil
        }
    }
}
