import Foundation
import Testing

@testable import GameCenterServer

/// Tokens are base64url without padding (RFC 4648 §5).
struct Base64URLTests {
    @Test(
        arguments: [
            ([0xFB, 0xFF, 0xBF], "-_-_"), ([0xFF], "_w"), ([0xFF, 0xEE], "_-4"), ([], ""), (Array("any carnal pleas".utf8), "YW55IGNhcm5hbCBwbGVhcw"),
        ] as [([UInt8], String)])
    func bytesEncodeAsTheRFCSays(bytes: [UInt8], encoded: String) {
        #expect(Data(bytes).base64URLEncoded == encoded)
    }
}
