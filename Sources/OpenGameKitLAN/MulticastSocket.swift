import GameCenterProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NIOPosix

/// A UDP socket on the mDNS port joined to 224.0.0.251 on one IPv4 interface (the SwiftNIO edge).
///
/// The socket binds `0.0.0.0:5353` with `SO_REUSEADDR` and `SO_REUSEPORT`, so it coexists with other
/// mDNS stacks on the host (Avahi, python-zeroconf, other instances of this module); every socket bound
/// to the port receives each multicast datagram. Outgoing multicast uses the chosen interface, TTL 255
/// (RFC 6762 §11) and loopback enabled, so other processes on the same host see our packets. Datagrams
/// that arrived on another interface are dropped using `IP_PKTINFO`.
public final class MulticastSocket: Sendable {
    /// The mDNS IPv4 group address.
    public static let groupHost = "224.0.0.251"
    /// The mDNS port.
    public static let mdnsPort = 5353

    /// The interface the socket joined the group on.
    public let interfaceName: String
    /// The interface's IPv4 address.
    public let interfaceAddress: IPv4Address
    /// Received datagrams, in arrival order. Finishes when the socket closes.
    public let datagrams: AsyncStream<ReceivedDatagram>

    private let channel: any Channel
    private let group: SocketAddress

    private init(channel: any Channel, group: SocketAddress, interfaceName: String, interfaceAddress: IPv4Address, datagrams: AsyncStream<ReceivedDatagram>) {
        self.channel = channel
        self.group = group
        self.interfaceName = interfaceName
        self.interfaceAddress = interfaceAddress
        self.datagrams = datagrams
    }

    /// Chooses an interface: the one named `name`, or else the first non-loopback IPv4 interface with multicast.
    public static func findInterface(named name: String?) throws -> NIONetworkDevice {
        let devices = try System.enumerateDevices().filter { device in
            if case .v4 = device.address { return true }
            return false
        }
        if let name {
            guard let device = devices.first(where: { $0.name == name }) else { throw MulticastSocketError.interfaceNotFound(name) }
            guard device.multicastSupported else { throw MulticastSocketError.multicastDisabled(name) }
            return device
        }
        guard
            let device = devices.first(where: { device in
                guard device.multicastSupported, case .v4(let address) = device.address else { return false }
                return address.address.sin_addr.s_addr != 0 && UInt32(bigEndian: address.address.sin_addr.s_addr) >> 24 != 127
            })
        else { throw MulticastSocketError.noMulticastInterface }
        return device
    }

    /// Opens the socket on interface `interfaceName` (default: see ``findInterface(named:)``).
    /// `port` is 5353 except in tests.
    public static func open(
        interfaceName: String? = nil,
        port: Int = MulticastSocket.mdnsPort,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "OpenGameKitLAN.MulticastSocket")
    ) async throws -> MulticastSocket {
        let device = try findInterface(named: interfaceName)
        guard case .v4(let deviceAddress) = device.address else { throw MulticastSocketError.noMulticastInterface }
        let group = try SocketAddress(ipAddress: groupHost, port: port)
        let (stream, continuation) = AsyncStream.makeStream(of: ReceivedDatagram.self, bufferingPolicy: .bufferingNewest(1024))
        let interfaceIndex = device.interfaceIndex
        let reusePort = ChannelOptions.Types.SocketOption(level: .socket, name: NIOBSDSocket.Option(rawValue: SO_REUSEPORT))
        let channel = try await DatagramBootstrap(group: eventLoopGroup)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(reusePort, value: 1)
            .channelOption(.receivePacketInfo, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        DatagramReceiveHandler(continuation: continuation, interfaceIndex: interfaceIndex, logger: logger)
                    )
                }
            }
            .bind(host: "0.0.0.0", port: port)
            .get()
        do {
            guard let multicast = channel as? any MulticastChannel, let options = channel as? any SocketOptionProvider else {
                throw MulticastSocketError.multicastDisabled(device.name)
            }
            try await multicast.joinGroup(group, device: device).get()
            try await options.setIPMulticastIF(deviceAddress.address.sin_addr).get()
            try await options.setIPMulticastTTL(255).get()
            try await options.setIPMulticastLoop(1).get()
        } catch {
            try? await channel.close().get()
            continuation.finish()
            throw error
        }
        channel.closeFuture.whenComplete { _ in continuation.finish() }
        let raw = UInt32(bigEndian: deviceAddress.address.sin_addr.s_addr)
        let address = IPv4Address(UInt8(raw >> 24), UInt8((raw >> 16) & 0xFF), UInt8((raw >> 8) & 0xFF), UInt8(raw & 0xFF))
        logger.debug("mDNS socket open", metadata: [LogKey.interface: "\(device.name)", LogKey.address: "\(address)", LogKey.port: "\(port)"])
        return MulticastSocket(channel: channel, group: group, interfaceName: device.name, interfaceAddress: address, datagrams: stream)
    }

    /// Sends `bytes` to the mDNS group, or to `destination` for unicast replies.
    public func send(_ bytes: [UInt8], to destination: SocketAddress? = nil) async throws {
        let buffer = channel.allocator.buffer(bytes: bytes)
        try await channel.writeAndFlush(AddressedEnvelope(remoteAddress: destination ?? group, data: buffer)).get()
    }

    /// Closes the socket; ``datagrams`` finishes.
    public func close() async {
        try? await channel.close().get()
    }
}

/// Forwards datagrams that arrived on the chosen interface into an `AsyncStream`.
private final class DatagramReceiveHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    let continuation: AsyncStream<ReceivedDatagram>.Continuation
    let interfaceIndex: Int
    let logger: Logger

    init(continuation: AsyncStream<ReceivedDatagram>.Continuation, interfaceIndex: Int, logger: Logger) {
        self.continuation = continuation
        self.interfaceIndex = interfaceIndex
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        if let info = envelope.metadata?.packetInfo, info.interfaceIndex != interfaceIndex {
            return
        }
        continuation.yield(ReceivedDatagram(bytes: Array(buffer: envelope.data), source: envelope.remoteAddress))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // UDP errors (e.g. ICMP unreachable) are not fatal for a multicast listener.
        logger.debug("mDNS socket error", metadata: [LogKey.error: "\(error)"])
    }
}
