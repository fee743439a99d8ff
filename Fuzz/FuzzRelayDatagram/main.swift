import FuzzerMain
import GameCenterProtocol
import NIOCore

/// The fuzzer's fixed values.
enum Fixed {
    /// The key every datagram of the fuzzer is sealed and opened with (the corpus's datagrams are sealed with it too).
    static let key = RelayKey(bytes: (0..<32).map { UInt8($0) })!
    /// Datagram kinds by the input's first byte, for the sealed half of the fuzzer.
    static let kinds: [RelayDatagramKind] = [.clientData, .clientProbe, .serverData, .serverProbeAck, .clientVoice, .serverVoice]
}

/// The fuzz target (libFuzzer's `LLVMFuzzerTestOneInput`), in two halves.
///
/// `bytes` as a datagram that arrived: both forms of `peekHeader` read the same header, `open` and `openInPlace` agree,
/// and a datagram that opens is read as its kind's body. Then the rest of `bytes` after the first byte as the body of a
/// datagram of the kind that byte picks, sealed under the fuzzer's key (in place and through a buffer, to the same
/// bytes): it must open to that body exactly when it is within `RelayDatagram.maximumSize`, and every body that reads
/// must build and seal again, through its kind's own writer, to the same datagram.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRelayDatagram(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: bytes, count: count))
    _ = receive(input)
    guard let first = input.first else { return 0 }
    let header = RelayDatagramHeader(kind: Fixed.kinds[Int(first) % Fixed.kinds.count], connectionID: 0x0123_4567_89AB_CDEF, counter: UInt64(count))
    let body = Array(input.dropFirst())
    let datagram = sealed(header, body: body)
    let opened = receive(datagram)
    if datagram.count <= RelayDatagram.maximumSize {
        if opened != body { fatalError("a sealed \(header.kind) body of \(body.count) bytes opened as \(String(describing: opened))") }
    } else if opened != nil {
        fatalError("a datagram of \(datagram.count) bytes, over the maximum, opened")
    }
    return 0
}

/// `body` sealed under `key`, checked against sealing in place.
func sealed(_ header: RelayDatagramHeader, body: [UInt8]) -> [UInt8] {
    var buffer = ByteBuffer()
    RelayDatagram.seal(header, body: ByteBuffer(bytes: body), key: Fixed.key, into: &buffer)
    let datagram = Array(buffer.readableBytesView)
    let inPlace = written(datagram.count) { space in
        UnsafeMutableRawBufferPointer(rebasing: space[RelayDatagram.headerSize...]).copyBytes(from: body)
        return RelayDatagram.sealInPlace(header, bodyCount: body.count, key: Fixed.key, in: space)
    }
    if inPlace != datagram { fatalError("sealing in place differs from sealing through a buffer") }
    return datagram
}

/// A received datagram: its header peeked and its body opened both ways; the body, when it opened, read as its kind's.
func receive(_ datagram: [UInt8]) -> [UInt8]? {
    let buffer = ByteBuffer(bytes: datagram)
    let header = RelayDatagram.peekHeader(buffer)
    let rawHeader = datagram.withUnsafeBytes { RelayDatagram.peekHeader($0) }
    if header != rawHeader { fatalError("peekHeader read \(String(describing: header)) from a buffer, \(String(describing: rawHeader)) in place") }
    guard let header else { return nil }
    let opened = try? RelayDatagram.open(buffer, key: Fixed.key)
    var copy = datagram
    let inPlace = copy.withUnsafeMutableBytes { RelayDatagram.openInPlace($0, header: header, key: Fixed.key).map { Array($0) } }
    let body = opened.map { Array($0.body.readableBytesView) }
    if body != inPlace || (opened != nil && opened?.header != header) {
        fatalError("open gave \(String(describing: body)), openInPlace \(String(describing: inPlace))")
    }
    if let body { read(body, of: header, sealedAs: datagram) }
    return body
}

/// Reads `body` as `header.kind`'s; a body that reads must be built and sealed again, by the kind's writer, as `datagram`.
func read(_ body: [UInt8], of header: RelayDatagramHeader, sealedAs datagram: [UInt8]) {
    let rebuilt: [UInt8]?
    switch header.kind {
    case .clientData:
        let buffered = try? RelayDatagram.readClientDataBody(ByteBuffer(bytes: body))
        let inPlace = body.withUnsafeBytes { RelayDatagram.readClientDataBody($0).map { (Array($0.recipients), Array($0.payload)) } }
        if buffered?.recipients != inPlace?.0 || buffered.map({ Array($0.payload.readableBytesView) }) != inPlace?.1 {
            fatalError("the two clientData readers disagree")
        }
        if let buffered, RelayDatagram.clientDataBody(recipients: buffered.recipients, payload: buffered.payload) != ByteBuffer(bytes: body) {
            fatalError("a clientData body builds again differently")
        }
        rebuilt = inPlace.map { recipients, payload in
            written(RelayDatagram.clientDataSize(recipientCount: recipients.count, payloadCount: payload.count)) { space in
                payload.withUnsafeBytes { RelayDatagram.sealClientData(header, recipients: recipients, payload: $0, key: Fixed.key, in: space) }
            }
        }
    case .serverData:
        let buffered = try? RelayDatagram.readServerDataBody(ByteBuffer(bytes: body))
        let inPlace = body.withUnsafeBytes { RelayDatagram.readServerDataBody($0).map { ($0.sender, Array($0.payload)) } }
        if buffered?.sender != inPlace?.0 || buffered.map({ Array($0.payload.readableBytesView) }) != inPlace?.1 {
            fatalError("the two serverData readers disagree")
        }
        if let buffered, RelayDatagram.serverDataBody(sender: buffered.sender, payload: buffered.payload) != ByteBuffer(bytes: body) {
            fatalError("a serverData body builds again differently")
        }
        rebuilt = inPlace.map { sender, payload in
            written(RelayDatagram.serverDataSize(payloadCount: payload.count)) { space in
                payload.withUnsafeBytes { RelayDatagram.sealServerData(header, sender: sender, payload: $0, key: Fixed.key, in: space) }
            }
        }
    case .clientVoice:
        let voice = body.withUnsafeBytes { RelayDatagram.readClientVoiceBody($0).map { ($0.channel, Array($0.payload)) } }
        if let (channel, payload) = voice {
            checkChannel(channel)
            if RelayDatagram.clientVoiceBody(channel: channel, payload: ByteBuffer(bytes: payload)) != ByteBuffer(bytes: body) {
                fatalError("a clientVoice body builds again differently")
            }
        }
        rebuilt = voice.map { channel, payload in
            written(RelayDatagram.clientVoiceSize(channel: channel, payloadCount: payload.count)) { space in
                payload.withUnsafeBytes { RelayDatagram.sealClientVoice(header, channel: channel, payload: $0, key: Fixed.key, in: space) }
            }
        }
    case .serverVoice:
        let voice = body.withUnsafeBytes { RelayDatagram.readServerVoiceBody($0).map { ($0.sender, $0.channel, Array($0.payload)) } }
        if let voice { checkChannel(voice.1) }
        rebuilt = voice.map { sender, channel, payload in
            written(RelayDatagram.serverVoiceSize(channel: channel, payloadCount: payload.count)) { space in
                payload.withUnsafeBytes { RelayDatagram.sealServerVoice(header, sender: sender, channel: channel, payload: $0, key: Fixed.key, in: space) }
            }
        }
    case .clientProbe, .serverProbeAck:
        rebuilt = nil
    case .peerProbe, .peerProbeAck, .peerData, .peerReliable, .peerAck:
        // Between two devices: the SDK reads these bodies (numbers at fixed places, then the payload).
        rebuilt = nil
    }
    if let rebuilt, rebuilt != datagram { fatalError("a \(header.kind) datagram is built again differently") }
}

/// A channel name the relay accepted is one the SDK could have sent.
func checkChannel(_ channel: String) {
    if let problem = VoiceLimits.problem(withChannelName: channel) { fatalError("a voice body read with a bad channel name: \(problem)") }
}

/// The bytes `write` puts in a space of `count` bytes; it must say it wrote them all.
func written(_ count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    let length = bytes.withUnsafeMutableBytes(write)
    if length != count { fatalError("wrote \(length) bytes, \(count) expected") }
    return bytes
}

// libFuzzer runs the fuzz target on the inputs it makes (and the corpus folders and options on the command line).
ogk_fuzzer_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzRelayDatagram)
