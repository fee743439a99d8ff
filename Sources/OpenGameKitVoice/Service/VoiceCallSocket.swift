#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// The UDP socket a device's voice calls share for their direct paths, on one of SwiftNIO's shared event loops.
///
/// Every datagram that arrives is handed to `receive` with where it came from; nothing is kept. The socket is bound
/// at once (so its port is known) and handed to SwiftNIO without waiting, so it can be opened on any thread, an
/// event loop's included (a game that answers a call from its match delegate).
final class VoiceCallSocket: Sendable {
    private let channel: EventLoopFuture<any Channel>

    /// The UDP port the socket is bound to.
    let port: UInt16

    /// Binds a socket on every IPv4 interface, on `port` (0: one the system picks), and calls `receive` on the
    /// event loop for every datagram. Throws when the port cannot be bound (a fixed port another program holds: no
    /// `SO_REUSEADDR`, so two games never share one and steal each other's voice).
    init(port: UInt16, receive: @escaping @Sendable ([UInt8], SocketAddress) -> Void) throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_DGRAM, 0)
        #endif
        guard descriptor >= 0 else { throw VoiceError(.ioFailure, "no UDP socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = INADDR_ANY
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            let reason = String(cString: strerror(errno))
            closeDescriptor(descriptor)
            throw VoiceError(.ioFailure, "UDP port \(port) cannot be bound: \(reason)")
        }
        self.port = UInt16(bigEndian: address.sin_port)
        channel = DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Handler(receive: receive)) }
            }
            .withBoundSocket(descriptor)
    }

    /// This device's candidates: each IPv4 interface address that is up (loopback last) with the socket's port.
    func candidates() -> [VoiceCallCandidate] {
        let devices = (try? System.enumerateDevices()) ?? []
        var found: [VoiceCallCandidate] = []
        for device in devices {
            guard let address = device.address, var candidate = VoiceCallCandidate(address) else { continue }
            candidate.port = port
            if !found.contains(candidate) { found.append(candidate) }
        }
        // Other hosts reach the interface addresses; the loopback one only serves two devices on this machine.
        let ordered = found.filter { $0.address.first != 127 } + found.filter { $0.address.first == 127 }
        return Array(ordered.prefix(VoiceCallSignal.maxCandidates))
    }

    /// Sends `bytes` to `address`; a send that fails is a lost datagram, as on any UDP path.
    func send(_ bytes: [UInt8], to address: SocketAddress) {
        channel.whenSuccess { channel in
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: channel.allocator.buffer(bytes: bytes)), promise: nil)
        }
    }

    /// Closes the socket.
    func close() {
        channel.whenSuccess { $0.close(promise: nil) }
    }

    private final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let receive: @Sendable ([UInt8], SocketAddress) -> Void

        init(receive: @escaping @Sendable ([UInt8], SocketAddress) -> Void) {
            self.receive = receive
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            receive(Array(envelope.data.readableBytesView), envelope.remoteAddress)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // An ICMP error for an earlier send (a candidate nobody listens on): UDP carries on.
        }
    }
}

/// Closes a file descriptor (the C library's `close`, which the socket's own `close()` hides).
private func closeDescriptor(_ descriptor: CInt) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #elseif canImport(Musl)
    _ = Musl.close(descriptor)
    #elseif canImport(Darwin)
    _ = Darwin.close(descriptor)
    #endif
}
