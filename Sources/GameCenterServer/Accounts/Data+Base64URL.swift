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
