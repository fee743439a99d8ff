import Foundation

extension Data {
    /// The bytes in base64url without padding (RFC 4648 §5): safe in cookies, URLs and form fields.
    var base64URLEncoded: String {
        String(
            decoding: base64EncodedString().utf8.compactMap { byte -> UInt8? in
                switch byte {
                case UInt8(ascii: "+"): UInt8(ascii: "-")
                case UInt8(ascii: "/"): UInt8(ascii: "_")
                case UInt8(ascii: "="): nil
                default: byte
                }
            }, as: UTF8.self)
    }
}

extension Data {
    /// Decodes base64url with or without padding (RFC 4648 §5); nil for anything else.
    init?(base64URLEncoded text: some StringProtocol) {
        guard text.utf8.allSatisfy(Self.base64URLAlphabet.contains) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 = base64.trimmingCharacters(in: ["="])
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }

    private static let base64URLAlphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=".utf8)
}
