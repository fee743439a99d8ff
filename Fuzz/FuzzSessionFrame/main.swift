import FuzzerMain
import GameCenterProtocol
import NIOCore
import OpenGameKitSessionWire

/// The fuzz target (libFuzzer's `LLVMFuzzerTestOneInput`): `bytes` as what a session's TCP connection brought, as
/// one record's opened body, and as one UDP datagram.
///
/// The stream is split into records by a `SessionRecordDecoder` in one read and again in reads whose sizes the input
/// picks: the records, the error and what stays buffered must not depend on the reads. The bytes taken as an opened
/// record's body must decode to a frame that encodes and decodes back to itself, with no message over the reliable
/// limit (records are sealed, so the frame parser only ever sees bodies that opened; it must still refuse anything
/// else cleanly). A datagram's clear header must parse only from at least a header's bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSessionFrame(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: bytes, count: count))
    let whole = Records(input, reads: [input.count])
    let split = Records(input, reads: input.indices.map { 1 + Int(input[$0]) % 17 })
    if whole != split { fatalError("in one read: \(whole); in small reads: \(split)") }

    if let frame = try? SessionFrame.decode(body: ByteBuffer(bytes: input)) {
        if case .data(let message) = frame, message.count > Limits.maximumReliableMessageBytes {
            fatalError("a message of \(message.count) bytes, over the reliable limit")
        }
        let again = try? SessionFrame.decode(body: ByteBuffer(bytes: frame.encoded()))
        if again != frame { fatalError("\(frame) encodes to bytes that decode as \(String(describing: again))") }
    }

    if UnreliableDatagram(header: ByteBuffer(bytes: input)) != nil, input.count < UnreliableDatagram.headerLength {
        fatalError("a datagram header parsed from \(input.count) bytes")
    }
    return 0
}

/// What a `SessionRecordDecoder` made of a stream fed in reads of the given sizes (the last read takes the rest).
struct Records: Equatable, CustomStringConvertible {
    /// The records' bodies in order, up to the first error.
    var bodies: [[UInt8]] = []
    /// The error that stopped decoding, if any.
    var error: SessionProtocolError?
    /// The decoder's buffered bytes at the end.
    var bufferedByteCount = 0

    init(_ stream: [UInt8], reads: [Int]) {
        var decoder = SessionRecordDecoder()
        var start = 0
        var sizes = reads.makeIterator()
        while start < stream.count, error == nil {
            let end = min(stream.count, start + (sizes.next() ?? stream.count))
            decoder.feed(ByteBuffer(bytes: stream[start..<end]))
            start = end
            do {
                while let body = try decoder.next({ body throws(SessionProtocolError) in Array(body.readableBytesView) }) { bodies.append(body) }
            } catch {
                self.error = error
            }
        }
        bufferedByteCount = decoder.bufferedByteCount
    }

    var description: String { "\(bodies.count) records, error \(String(describing: error)), \(bufferedByteCount) bytes buffered" }
}

// libFuzzer runs the fuzz target on the inputs it makes (and the corpus folders and options on the command line).
ogk_fuzzer_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzSessionFrame)
