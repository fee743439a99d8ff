import Foundation
import Hummingbird

/// A submitted HTML form (`application/x-www-form-urlencoded`), read with a size limit.
struct SubmittedForm: Sendable {
    /// Forms larger than this are refused.
    static let maximumBytes = 16 * 1024

    /// The values of each field by name, in the order sent (checkboxes of one name send several).
    let fields: [String: [String]]

    /// A form with no fields (a GET request's).
    static let empty = SubmittedForm(fields: [:])

    /// The first value of the field `name`, if sent.
    subscript(_ name: String) -> String? { fields[name]?.first }

    /// Every value sent for the field `name`, in order.
    func values(_ name: String) -> [String] { fields[name] ?? [] }

    /// Reads the request's body as a form of at most `limit` bytes.
    static func read(_ request: Request, upTo limit: Int = maximumBytes) async throws -> SubmittedForm {
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: limit)
        } catch {
            throw APIError.bodyTooLarge
        }
        return SubmittedForm(encoded: String(buffer: body))
    }

    /// Parses `name=value&…`, `+` standing for a space.
    init(encoded: String) {
        var fields: [String: [String]] = [:]
        for pair in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (part: Substring) in String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else { continue }
            fields[name, default: []].append(value)
        }
        self.fields = fields
    }

    private init(fields: [String: [String]]) {
        self.fields = fields
    }
}
