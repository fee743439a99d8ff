import Foundation

/// Text files shipped among the server's resources (`Sources/GameCenterServer/Resources`).
enum BundledText {
    /// The text of `Resources/<subdirectory>/<name>.<ext>`; empty when the resource is missing.
    static func read(_ name: String, _ ext: String, in subdirectory: String = "Resources") -> String {
        guard let url = Bundle.module.url(forResource: name, withExtension: ext, subdirectory: subdirectory),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return "" }
        return text
    }
}
