import Foundation
import GameCenterProtocol
import HTTPTypes
import HummingbirdWSClient
import Logging
import NetworkFaultProxy
import NIOCore
import NIOPosix
@testable import OpenGameKit
import Synchronization

/// A relay member that speaks the wire protocol by hand, as a hostile or broken client would: it sends what the
/// SDK never sends (forged and replayed datagrams, oversized frames, floods).
final class RawRelayClient: @unchecked Sendable {
    let welcome: RelayWelcome
    private let outgoing: AsyncStream<ByteBuffer>.Continuation
    private let inbox: Inbox
    private let udp: any Channel
    private let relayAddress: SocketAddress
    private var counter: UInt64 = 0

    /// What the WebSocket task heard.
    private final class Inbox: Sendable {
        let welcome = Mutex<RelayWelcome?>(nil)
        let frames = Mutex<[RelayServerFrame]>([])
        let closed = Mutex(false)
    }

    private init(welcome: RelayWelcome, outgoing: AsyncStream<ByteBuffer>.Continuation, inbox: Inbox, udp: any Channel, relayAddress: SocketAddress) {
        self.welcome = welcome
        self.outgoing = outgoing
        self.inbox = inbox
        self.udp = udp
        self.relayAddress = relayAddress
    }

    /// Connects to match `matchID`'s relay as the player signed in on `device` (replacing that device's own connection).
    static func connect(_ device: GKGameCenter, matchID: String, udpPort: Int) async throws -> RawRelayClient {
        let token = try device.requireToken()
        let headers = device.api.webSocketHeaders(token: token)
        let url = APIClient.webSocketURL(on: device.api.server, "/v1/matches/\(matchID)/relay")
        let (outgoingStream, outgoing) = AsyncStream.makeStream(of: ByteBuffer.self)
        let inbox = Inbox()
        Task {
            _ = try? await WebSocketClient.connect(
                url: url, configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: headers),
                logger: Logger(label: "raw-relay")
            ) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // A write that fails (the server closed while frames were still going out) ends the writing only:
                    // the frames the server sent before it closed, its closing frame above all, are still read.
                    group.addTask {
                        for await frame in outgoingStream {
                            guard (try? await outbound.write(.binary(frame))) != nil else { return }
                        }
                    }
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .binary(let buffer) = message, let frame = try? RelayServerFrame.read(from: buffer) else { continue }
                        if case .welcome(let welcome) = frame { inbox.welcome.withLock { $0 = welcome } }
                        inbox.frames.withLock { $0.append(frame) }
                    }
                    group.cancelAll()
                }
            }
            inbox.closed.withLock { $0 = true }
        }
        try await waitUntil("the relay's welcome") {
            if inbox.welcome.withLock({ $0 }) != nil { return true }
            guard !inbox.closed.withLock({ $0 }) else { throw LiveServerError("the relay closed the connection before its welcome") }
            return false
        }
        let udp = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        return RawRelayClient(
            welcome: inbox.welcome.withLock { $0! }, outgoing: outgoing, inbox: inbox, udp: udp,
            relayAddress: try SocketAddress(ipAddress: "127.0.0.1", port: udpPort))
    }

    /// The member index of `playerID`.
    func index(of playerID: String) -> UInt8? { welcome.members.first { $0.playerID == playerID }?.index }

    /// Frames received so far.
    var received: [RelayServerFrame] { inbox.frames.withLock { $0 } }

    /// Whether the server closed the connection.
    var isClosed: Bool { inbox.closed.withLock { $0 } }

    /// Sends a client frame on the WebSocket.
    func send(_ frame: RelayClientFrame) {
        var buffer = ByteBuffer()
        frame.write(to: &buffer)
        outgoing.yield(buffer)
    }

    /// A correctly sealed data datagram (the next counter) to `recipients`.
    func sealedData(_ text: String, to recipients: [UInt8], key: RelayKey? = nil) -> ByteBuffer {
        counter += 1
        var datagram = ByteBuffer()
        RelayDatagram.seal(
            RelayDatagramHeader(kind: .clientData, connectionID: welcome.connectionID, counter: counter),
            body: RelayDatagram.clientDataBody(recipients: recipients, payload: ByteBuffer(string: text)),
            key: key ?? welcome.key, into: &datagram)
        return datagram
    }

    /// Sends raw bytes to the relay's UDP port.
    func sendDatagram(_ bytes: ByteBuffer) async throws {
        try await udp.writeAndFlush(AddressedEnvelope(remoteAddress: relayAddress, data: bytes))
    }

    /// Closes the UDP socket and the WebSocket.
    func close() {
        outgoing.finish()
        udp.close(promise: nil)
    }
}
