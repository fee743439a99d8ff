import Yams

/// A YAML node with its path in the manifest, so every error can name the field it is about.
struct ManifestNode {
    let node: Node
    let path: String
    let file: String

    func fail(_ rule: String) -> ManifestError {
        ManifestError(file: file, field: path, rule: rule)
    }

    private func child(_ node: Node, _ key: String) -> ManifestNode {
        ManifestNode(node: node, path: path.isEmpty ? key : "\(path).\(key)", file: file)
    }

    /// The mapping's values by key; a key outside `allowed` is an error (a typo must not pass silently).
    func mapping(allowed: Set<String>) throws -> [String: ManifestNode] {
        guard let mapping = node.mapping else { throw fail("must be a mapping of keys to values") }
        var result: [String: ManifestNode] = [:]
        for (keyNode, value) in mapping {
            guard let key = keyNode.string else { throw fail("keys must be strings") }
            guard allowed.contains(key) else {
                throw child(value, key).fail("unknown key; allowed here: \(allowed.sorted().joined(separator: ", "))")
            }
            guard result[key] == nil else { throw child(value, key).fail("appears twice") }
            result[key] = child(value, key)
        }
        return result
    }

    /// The mapping's values by key, any string key allowed.
    func anyMapping() throws -> [(String, ManifestNode)] {
        guard let mapping = node.mapping else { throw fail("must be a mapping of keys to values") }
        return try mapping.map { keyNode, value in
            guard let key = keyNode.string else { throw fail("keys must be strings") }
            return (key, child(value, key))
        }
    }

    /// Whether the value is YAML's (or JSON's) null.
    var isNull: Bool { node.tag.description == "tag:yaml.org,2002:null" }

    /// A number, whole or not.
    func double() throws -> Double {
        guard let scalar = node.scalar, !isNull, let value = Double(scalar.string), value.isFinite else { throw fail("must be a number") }
        return value
    }

    func sequence() throws -> [ManifestNode] {
        guard let sequence = node.sequence else { throw fail("must be a list") }
        return sequence.enumerated().map { ManifestNode(node: $1, path: "\(path)[\($0)]", file: file) }
    }

    func string() throws -> String {
        guard let scalar = node.scalar, node.tag.description != "tag:yaml.org,2002:null" else { throw fail("must be a string") }
        return scalar.string
    }

    func int() throws -> Int {
        guard let value = node.int else { throw fail("must be a whole number") }
        return value
    }

    func bool() throws -> Bool {
        guard let value = node.bool else { throw fail("must be true or false") }
        return value
    }
}
