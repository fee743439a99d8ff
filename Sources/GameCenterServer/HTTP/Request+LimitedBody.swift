import Hummingbird
import NIOCore

extension Request {
    /// The body, at most `limit` bytes, else `tooLarge`: thrown before anything is read when the declared length is
    /// over the limit, and as soon as more arrives otherwise.
    func body(upTo limit: Int, orThrow tooLarge: APIError) async throws -> ByteBuffer {
        if let length = headers[.contentLength].flatMap(Int.init), length > limit { throw tooLarge }
        do {
            return try await body.collect(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge
        }
    }
}
