import Foundation

/// The JSON coders both sides use: dates as seconds since 1970, keys as written.
public enum WireCoding {
    /// A new encoder configured for the wire format.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }

    /// A new decoder configured for the wire format.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }
}
