/// The record layer of a session's TCP connection: how `SessionHandshake`s and sealed ``SessionFrame``s travel.
///
/// Every record is a 4-byte big-endian length `n` (1 ≤ n ≤ ``maxLength``), then `n` bytes. Each side's first record
/// is its handshake, in clear. Every later record is sealed with ChaCha20-Poly1305 under the sending direction's
/// key: the frame's bytes encrypted, then the 16-byte tag, so `n` is the frame's length plus 16. The length prefix
/// is the additional authenticated data, and the nonce is the record's number in its direction (0 for the first
/// sealed record, then 1, 2…), which no record carries: a record dropped, repeated, reordered or altered fails to
/// open, and the connection is closed. The first sealed record in each direction is empty (just a tag): it
/// confirms that both sides agreed on the keys before any frame is sent.
package enum SessionRecord {
    /// Bytes of the length prefix.
    package static let lengthPrefixSize = 4
    /// Bytes of the Poly1305 tag that ends every sealed record.
    package static let tagSize = 16
    /// The largest allowed length field: a sealed data frame with an 87 KB message.
    package static let maxLength = SessionFrame.maxLength + tagSize
    /// Bytes a data frame adds to its message on the wire: length prefix, kind and tag.
    package static let dataOverhead = lengthPrefixSize + 1 + tagSize
}
