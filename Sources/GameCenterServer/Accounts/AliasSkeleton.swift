import Foundation

/// The skeleton of an alias: two aliases that look alike have the same skeleton ("Bob", "bob", "B0b" with a zero,
/// and "Вob" with a Cyrillic "В" are all "bob"), so a new alias is checked against those already taken in its
/// environment by comparing skeletons.
///
/// It is UTS #39's skeleton with case folded: NFD, each character replaced by its prototype from Unicode's
/// `confusables.txt` (bundled as `Resources/confusables.txt`, Unicode 13.0, made by
/// `scripts/generate-confusables.sh`), then lower-cased and NFD again. The standard keeps case; an alias that
/// differs from another only in case would pass for it just as well.
enum AliasSkeleton {
    /// Source code point → its prototype, from the bundled table.
    private static let prototypes: [UInt32: String] = {
        var table: [UInt32: String] = [:]
        table.reserveCapacity(6_400)
        for line in BundledText.read("confusables", "txt").split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: ";")
            guard fields.count == 2,
                let source = UInt32(fields[0].trimmingCharacters(in: .whitespaces), radix: 16)
            else { continue }
            let target = fields[1].split(separator: " ").compactMap { UInt32($0, radix: 16).flatMap(Unicode.Scalar.init) }
            guard !target.isEmpty else { continue }
            table[source] = String(String.UnicodeScalarView(target))
        }
        return table
    }()

    /// How many characters the bundled table maps (0 means the resource is missing).
    static var tableSize: Int { prototypes.count }

    /// The skeleton of `alias`.
    static func of(_ alias: String) -> String {
        var mapped = String.UnicodeScalarView()
        for scalar in alias.decomposedStringWithCanonicalMapping.unicodeScalars {
            if let prototype = prototypes[scalar.value] {
                mapped.append(contentsOf: prototype.unicodeScalars)
            } else {
                mapped.append(scalar)
            }
        }
        return String(mapped).lowercased().decomposedStringWithCanonicalMapping
    }
}
