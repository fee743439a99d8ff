import Foundation
import FuzzerMain
import GameCenterProtocol

/// The fuzz target (libFuzzer's `LLVMFuzzerTestOneInput`): `bytes` as one text message on `/v1/realtime`, read as the
/// SDK reads a server frame and as a device frame, with the wire's JSON coders.
///
/// Whatever decodes must encode and decode again to the same frame. Foundation's JSON parser is not instrumented, so the
/// fuzzer finds the keys and event kinds through `fuzz.dict` rather than coverage.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRealtimeFrame(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = Data(UnsafeBufferPointer(start: bytes, count: count))
    let decoder = WireCoding.makeDecoder()
    if let frame = try? decoder.decode(ServerFrame.self, from: text) {
        let again = reencoded(frame, decoder: decoder)
        if again != frame { fatalError("server frame \(frame) came back as \(String(describing: again))") }
    }
    if let frame = try? decoder.decode(ClientFrame.self, from: text) {
        let again = reencoded(frame, decoder: decoder)
        if again != frame { fatalError("client frame \(frame) came back as \(String(describing: again))") }
    }
    return 0
}

/// `frame` encoded with the wire's encoder and decoded again; nil when either step fails.
func reencoded<Frame: Codable>(_ frame: Frame, decoder: JSONDecoder) -> Frame? {
    guard let json = try? WireCoding.makeEncoder().encode(frame) else { return nil }
    return try? decoder.decode(Frame.self, from: json)
}

// libFuzzer runs the fuzz target on the inputs it makes (and the corpus folders and options on the command line).
ogk_fuzzer_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzRealtimeFrame)
