import Crypto
import Foundation
import Testing
@testable import GameCenterProtocol

/// The cipher seals what swift-crypto's `ChaChaPoly` seals with the nonce `0000 ‖ counter`, with the kept BoringSSL
/// context and without, and opens only what is unaltered.
@Suite struct ChaChaPolyCipherTests {
    static let key = SymmetricKey(data: (0..<32).map { UInt8($0 * 7 & 0xFF) })
    static let fast = ChaChaPolyCipher(key: key)
    static let portable = ChaChaPolyCipher(key: key, fast: false)
    static let additionalData: [UInt8] = [0, 0, 0x01, 0x23]

    @Test func linuxUsesTheKeptContext() {
        #if os(Linux)
        #expect(Self.fast.context != nil)
        #endif
        #expect(Self.portable.context == nil)
    }

    @Test(arguments: [0, 1, 15, 16, 17, 64, 1000, 89_089])
    func bothSealWhatChaChaPolySealsAndOpenEachOther(_ size: Int) throws {
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        let counter: UInt64 = 0x0102_0304_0506_0708 &+ UInt64(size)
        var nonce = [UInt8](repeating: 0, count: 4)
        withUnsafeBytes(of: counter.bigEndian) { nonce += $0 }
        let reference = try ChaChaPoly.seal(plaintext, using: Self.key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: Self.additionalData)
        let expected = Array(reference.ciphertext) + Array(reference.tag)
        for cipher in [Self.fast, Self.portable] {
            let sealed = seal(plaintext, with: cipher, counter: counter)
            #expect(sealed == expected, "context \(cipher.context != nil)")
            for opener in [Self.fast, Self.portable] {
                #expect(open(sealed, with: opener, counter: counter) == plaintext)
            }
        }
    }

    @Test func openingInPlaceGivesThePlaintextAtTheStart() {
        let plaintext = Array("in place".utf8)
        for cipher in [Self.fast, Self.portable] {
            var bytes = seal(plaintext, with: cipher, counter: 9)
            let opened = bytes.withUnsafeMutableBytes { bytes in
                Self.additionalData.withUnsafeBytes { cipher.open(UnsafeRawBufferPointer(bytes), into: bytes, counter: 9, authenticating: $0) }
            }
            #expect(opened)
            #expect(Array(bytes.prefix(plaintext.count)) == plaintext)
        }
    }

    @Test func anyAlterationWrongCounterOrShortInputFails() {
        let plaintext = Array("attack at dawn".utf8)
        for cipher in [Self.fast, Self.portable] {
            let sealed = seal(plaintext, with: cipher, counter: 3)
            for index in sealed.indices {
                var tampered = sealed
                tampered[index] ^= 0x01
                #expect(open(tampered, with: cipher, counter: 3) == nil, "byte \(index)")
            }
            #expect(open(sealed, with: cipher, counter: 4) == nil)
            #expect(open(sealed, with: cipher, counter: 3, additionalData: [0, 0, 0x01, 0x24]) == nil)
            #expect(open(Array(sealed.dropLast()), with: cipher, counter: 3) == nil)
            #expect(open(Array(sealed.prefix(15)), with: cipher, counter: 3) == nil)
            #expect(open(sealed, with: ChaChaPolyCipher(key: SymmetricKey(size: .bits256)), counter: 3) == nil)
        }
    }

    private func seal(_ plaintext: [UInt8], with cipher: ChaChaPolyCipher, counter: UInt64) -> [UInt8] {
        var bytes = plaintext + [UInt8](repeating: 0, count: ChaChaPolyCipher.tagSize)
        bytes.withUnsafeMutableBytes { bytes in
            Self.additionalData.withUnsafeBytes { cipher.seal(bytes, count: plaintext.count, counter: counter, authenticating: $0) }
        }
        return bytes
    }

    private func open(
        _ sealed: [UInt8], with cipher: ChaChaPolyCipher, counter: UInt64, additionalData: [UInt8] = additionalData
    ) -> [UInt8]? {
        var plaintext = [UInt8](repeating: 0, count: max(0, sealed.count - ChaChaPolyCipher.tagSize))
        let opened = plaintext.withUnsafeMutableBytes { output in
            sealed.withUnsafeBytes { sealed in
                additionalData.withUnsafeBytes { cipher.open(sealed, into: output, counter: counter, authenticating: $0) }
            }
        }
        return opened ? plaintext : nil
    }
}
