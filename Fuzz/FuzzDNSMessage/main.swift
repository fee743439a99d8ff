import FuzzerMain
import OpenGameKitLAN

/// The fuzz target (libFuzzer's `LLVMFuzzerTestOneInput`): `bytes` as one mDNS datagram.
///
/// A message that parses must encode (with name compression) and parse again to the same message. The encoder may refuse
/// only a name it could not carry: a label whose bytes were not UTF-8 is read with U+FFFD in their place, which can make
/// it longer than 63 bytes or the name longer than 255. (U+FFFD is looked for among the scalars: followed by a combining
/// mark it is part of a larger character, which `String.contains` would not match.)
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDNSMessage(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let message = try? DNSMessage(bytes: Array(UnsafeBufferPointer(start: bytes, count: count))) else { return 0 }
    let encoded: [UInt8]
    do {
        encoded = try message.encoded()
    } catch {
        guard case .invalidName = error, message.description.unicodeScalars.contains("\u{FFFD}") else { fatalError("\(message)\ndoes not encode: \(error)") }
        return 0
    }
    let again: DNSMessage
    do {
        again = try DNSMessage(bytes: encoded)
    } catch {
        fatalError("\(message)\nencodes as \(encoded), which does not parse: \(error)")
    }
    if again != message { fatalError("\(message)\nencodes and parses again as\n\(again)") }
    return 0
}

// libFuzzer runs the fuzz target on the inputs it makes (and the corpus folders and options on the command line).
ogk_fuzzer_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzDNSMessage)
