import Foundation
import Hummingbird

/// A submitted HTML form (`application/x-www-form-urlencoded`), read with a size limit.
struct SubmittedForm: Sendable {
    /// Forms larger than this are refused.
    static let maximumBytes = 16 * 1024

    /// The fields by name; a repeated name keeps its first value.
    let fields: [String: String]

    /// A form with no fields (a GET request's).
    static let empty = SubmittedForm(fields: [:])

    /// The value of the field `name`, if sent.
    subscript(_ name: String) -> String? { fields[name] }

    /// Reads the request's body as a form.
    static func read(_ request: Request) async throws -> SubmittedForm {
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: maximumBytes)
        } catch {
            throw APIError.bodyTooLarge
        }
        return SubmittedForm(encoded: String(buffer: body))
    }

    /// Parses `name=value&…`, `+` standing for a space.
    init(encoded: String) {
        var fields: [String: String] = [:]
        for pair in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (part: Substring) in String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else { continue }
            if fields[name] == nil { fields[name] = value }
        }
        self.fields = fields
    }

    private init(fields: [String: String]) {
        self.fields = fields
    }
}
