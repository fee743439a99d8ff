import NIOCore
import OpenGameKitSessionWire
@testable import OpenGameKit

/// Test support: one direction of a connection after the handshake — frames sealed into records by one side, and
/// the byte stream split and opened back into frames by the other.
struct SealedStream {
    var sealer: SessionRecordSealer
    var opener: SessionRecordOpener
    var decoder = SessionRecordDecoder()
    /// Whether the next record must be the empty confirmation record (read and not returned).
    var confirmationFirst: Bool

    /// The initiator→responder direction of freshly agreed keys.
    init() throws {
        let keys = try SessionKeysFixture()
        self.init(sealer: keys.initiator.recordSealer, opener: keys.responder.recordOpener)
    }

    init(sealer: SessionRecordSealer, opener: SessionRecordOpener, confirmationFirst: Bool = false) {
        self.sealer = sealer
        self.opener = opener
        self.confirmationFirst = confirmationFirst
    }

    /// The records of `frames`, one after the other.
    mutating func seal(_ frames: [SessionFrame]) -> ByteBuffer {
        var buffer = ByteBuffer()
        for frame in frames { _ = sealer.write(into: &buffer, frame.encode) }
        return buffer
    }

    /// Feeds `bytes` to the decoder and returns every frame now complete.
    mutating func receive(_ bytes: ByteBuffer) throws(SessionProtocolError) -> [SessionFrame] {
        decoder.feed(bytes)
        var opener = self.opener
        var confirmationFirst = self.confirmationFirst
        defer {
            self.opener = opener
            self.confirmationFirst = confirmationFirst
        }
        var frames: [SessionFrame] = []
        while let frame = try decoder.next({ body throws(SessionProtocolError) -> SessionFrame? in
            let plaintext = try opener.open(body)
            guard confirmationFirst else { return try SessionFrame.decode(body: plaintext) }
            guard plaintext.readableBytes == 0 else { throw .unexpectedFrame }
            confirmationFirst = false
            return nil
        }) {
            if let frame { frames.append(frame) }
        }
        return frames
    }
}
