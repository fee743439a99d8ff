import FuzzerMain
import GameCenterProtocol
import NIOCore
import OpenGameKit

/// The fuzz target (libFuzzer's `LLVMFuzzerTestOneInput`): `bytes` as what a session's TCP connection brought, and as
/// one UDP datagram.
///
/// The stream is read by a `SessionFrameDecoder` in one read and again in reads whose sizes the input picks: the frames,
/// the error and what stays buffered must not depend on the reads. The frames must encode to exactly the stream's bytes
/// up to where decoding stopped, and no message may be over the reliable limit. A datagram that parses must encode to the
/// bytes it came from, within the unreliable limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSessionFrame(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: bytes, count: count))
    let whole = Decoded(input, reads: [input.count])
    let split = Decoded(input, reads: input.indices.map { 1 + Int(input[$0]) % 17 })
    if whole != split { fatalError("in one read: \(whole); in small reads: \(split)") }

    var encoded = ByteBuffer()
    for frame in whole.frames {
        if case .data(let message) = frame, message.count > Limits.maximumReliableMessageBytes {
            fatalError("a message of \(message.count) bytes, over the reliable limit")
        }
        frame.encode(into: &encoded)
    }
    if !input.starts(with: encoded.readableBytesView) { fatalError("the frames \(whole.frames) encode differently") }
    if whole.error == nil, whole.bufferedByteCount != input.count - encoded.readableBytes {
        fatalError("\(whole.bufferedByteCount) bytes buffered after \(encoded.readableBytes) of \(input.count) decoded")
    }

    if let datagram = UnreliableDatagram(bytes: input) {
        // "OGK", the version byte and the 16-byte token come before the message.
        if input.count - 20 > Limits.maximumUnreliableMessageBytes { fatalError("a datagram of \(input.count) bytes parsed") }
        if datagram.encoded() != input { fatalError("a datagram encodes as \(datagram.encoded())") }
    }
    return 0
}

/// What a `SessionFrameDecoder` made of a stream fed in reads of the given sizes (the last read takes the rest).
struct Decoded: Equatable, CustomStringConvertible {
    /// The frames in order, up to the first error.
    var frames: [SessionFrame] = []
    /// The error that stopped decoding, if any.
    var error: SessionProtocolError?
    /// The decoder's buffered bytes at the end.
    var bufferedByteCount = 0

    init(_ stream: [UInt8], reads: [Int]) {
        var decoder = SessionFrameDecoder()
        var start = 0
        var sizes = reads.makeIterator()
        while start < stream.count, error == nil {
            let end = min(stream.count, start + (sizes.next() ?? stream.count))
            decoder.feed(ByteBuffer(bytes: stream[start..<end]))
            start = end
            do {
                while let frame = try decoder.next() { frames.append(frame) }
            } catch {
                self.error = error
            }
        }
        bufferedByteCount = decoder.bufferedByteCount
    }

    var description: String { "\(frames.count) frames, error \(String(describing: error)), \(bufferedByteCount) bytes buffered" }
}

// libFuzzer runs the fuzz target on the inputs it makes (and the corpus folders and options on the command line).
ogk_fuzzer_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzSessionFrame)
