import Foundation
import GameCenterProtocol
import Hummingbird

/// Decodes request bodies as wire JSON, and turns a decoding failure into `request.malformed_body` whose message
/// names the field, what was wrong and what is allowed.
///
/// Hummingbird's `Request.decode` rewords a `DecodingError` into Foundation's phrasing before any middleware sees
/// it ("Value not found for `` key."); an `APIError` thrown here passes through it unchanged.
public struct WireRequestDecoder: RequestDecoder {
    let json: JSONDecoder

    /// Decodes `type` from the request's JSON body.
    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        try Self.decode(type, from: try await request.body.collect(upTo: context.maxUploadSize), json: json)
    }

    /// Decodes `type` from a JSON body already read (wire JSON).
    static func decode<T: Decodable>(_ type: T.Type, from body: ByteBuffer, json: JSONDecoder = WireCoding.makeDecoder()) throws -> T {
        do {
            return try json.decode(type, from: body)
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty, let fields = Self.numbersNotWhole(in: body) {
                // Foundation says "not valid JSON" for 5.5 or 2⁶³ where an integer is expected, naming no field;
                // when the body is valid JSON, those numbers are the only candidates.
                throw APIError.malformedBody(
                    "\(fields.count == 1 ? fields[0] : "one of \(fields.joined(separator: ", "))") must be a whole number from \(Int64.min) to \(Int64.max)")
            }
            throw APIError.malformedBody(Self.describe(error))
        }
    }

    /// The paths of the numbers in `body` that no Int64 holds, when `body` is valid JSON and has some.
    static func numbersNotWhole(in body: ByteBuffer) -> [String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView), options: [.fragmentsAllowed]) else { return nil }
        var found: [String] = []
        func walk(_ value: Any, _ path: String) {
            switch value {
            case let dictionary as [String: Any]:
                for (key, child) in dictionary.sorted(by: { $0.key < $1.key }) { walk(child, path.isEmpty ? key : "\(path).\(key)") }
            case let array as [Any]:
                for (index, child) in array.enumerated() { walk(child, "\(path)[\(index)]") }
            case let number as NSNumber:
                if Int64(number.stringValue) == nil { found.append(path.isEmpty ? "the body" : path) }
            default:
                break
            }
        }
        walk(object, "")
        return found.isEmpty ? nil : found
    }

    /// What was wrong, in the project's words: the field's path, the problem, what is allowed.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty
                ? "the body"
                : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                    .replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is required"
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)) must be \(expected(type))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)) must be \(expected(type)), not null"
        case .dataCorrupted(let context):
            let description = context.debugDescription
            if description.contains("does not fit in") || description.contains("Parsed JSON number") {
                // JSONDecoder's wording for 5.5 or 2⁶³ where a whole number is expected.
                return "\(path(context.codingPath)) must be a whole number from \(Int64.min) to \(Int64.max)"
            }
            if context.codingPath.isEmpty {
                return "the body is not valid JSON: send one JSON object as /openapi.yaml describes for this route"
            }
            // WireEnum's message names the allowed values; others say what they need themselves.
            return "\(path(context.codingPath)): \(description)"
        @unknown default:
            return "the body is not valid JSON for this route"
        }
    }

    /// The JSON a Swift type takes, as a client's developer would say it.
    static func expected(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt64.Type, is UInt32.Type, is UInt8.Type:
            "a whole number"
        case is Double.Type, is Float.Type: "a number"
        default:
            String(describing: type).hasPrefix("Array") ? "a list" : String(describing: type).hasPrefix("Dictionary") ? "an object" : "\(type)"
        }
    }
}
