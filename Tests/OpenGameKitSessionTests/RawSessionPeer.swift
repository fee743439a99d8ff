import NIOCore
import OpenGameKitSessionWire
@testable import OpenGameKit

/// Test support: a hand-made session peer on a raw TCP connection. It runs the secure handshake as the side that
/// connected, then sends whatever frames, or bytes, a test wants.
struct RawSessionPeer {
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var security: SessionChannelSecurity
    private var decoder = SessionRecordDecoder()
    private var sealer: SessionRecordSealer?

    /// A peer on a connected channel's streams; `passphrase` as the session's.
    init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        passphrase: SessionPassphrase? = nil
    ) {
        self.inbound = inbound.makeAsyncIterator()
        self.outbound = outbound
        security = SessionChannelSecurity(role: .initiator, passphrase: passphrase)
    }

    /// Sends the handshake and, once the keys are agreed, the confirmation; returns once the other side's
    /// confirmation opened. Throws if the connection ends first or sends anything invalid.
    mutating func handshake() async throws {
        var buffer = ByteBuffer()
        security.handshake.write(to: &buffer)
        try await outbound.write(buffer)
        while true {
            guard let bytes = try await inbound.next() else { throw SessionProtocolError.unexpectedFrame }
            decoder.feed(bytes)
            var security = self.security
            defer { self.security = security }
            while let event = try decoder.next({ record throws(SessionProtocolError) in try security.receive(record) }) {
                switch event {
                case .keysAgreed(var sealer):
                    var confirmation = ByteBuffer()
                    _ = sealer.write(into: &confirmation) { _ in }
                    self.sealer = sealer
                    try await outbound.write(confirmation)
                case .confirmed:
                    return
                case .frame:
                    throw SessionProtocolError.unexpectedFrame
                }
            }
        }
    }

    /// Sends `frame`, sealed (after ``handshake()``).
    mutating func send(_ frame: SessionFrame) async throws {
        var buffer = ByteBuffer()
        _ = sealer?.write(into: &buffer, frame.encode)
        try await outbound.write(buffer)
    }

    /// Sends `bytes` as they are.
    func send(raw bytes: [UInt8]) async throws {
        try await outbound.write(ByteBuffer(bytes: bytes))
    }

    /// Reads until the other side closes the connection (or it fails).
    mutating func waitUntilClosed() async {
        do {
            while try await inbound.next() != nil {}
        } catch {
            // A reset ends it too.
        }
    }
}
