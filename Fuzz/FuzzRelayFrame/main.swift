import FuzzerMain
import GameCenterProtocol
import NIOCore

/// The fuzz target (libFuzzer's `LLVMFuzzerTestOneInput`): `bytes` as one binary message on a relay WebSocket, read as
/// the SDK reads a server frame and as the server reads a device frame; and as a relayed reliable payload, whose
/// ``PeerEnvelope`` the SDK reads in a match that allows direct paths.
///
/// A frame that decodes must encode to exactly the bytes it came from (the layout has one encoding per frame), which also
/// checks that the decoder accepts nothing the encoder refuses: a player id outside 1 to 255 bytes, a UDP host over 255
/// bytes, a voice channel name outside `VoiceLimits` would trap in `write(to:)`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRelayFrame(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let message = ByteBuffer(bytes: UnsafeBufferPointer(start: bytes, count: count))
    if let frame = try? RelayServerFrame.read(from: message) {
        var written = ByteBuffer()
        frame.write(to: &written)
        if written != message { fatalError("server frame \(frame) re-encodes as \(written.readableBytesView.map { $0 })") }
    }
    if let frame = try? RelayClientFrame.read(from: message) {
        var written = ByteBuffer()
        frame.write(to: &written)
        if written != message { fatalError("client frame \(frame) re-encodes as \(written.readableBytesView.map { $0 })") }
    }
    var payload = message
    if let envelope = try? PeerEnvelope.read(from: &payload) {
        var written = ByteBuffer()
        envelope.write(to: &written)
        written.writeImmutableBuffer(payload)
        if written != message { fatalError("envelope \(envelope) re-encodes as \(written.readableBytesView.map { $0 })") }
    }
    return 0
}

// libFuzzer runs the fuzz target on the inputs it makes (and the corpus folders and options on the command line).
ogk_fuzzer_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzRelayFrame)
