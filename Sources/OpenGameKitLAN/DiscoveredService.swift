/// A resolved DNS-SD service instance found by a ``Browser``.
public struct DiscoveredService: Hashable, Sendable, CustomStringConvertible {
    /// The full instance name, e.g. `Alice's Game._mygame._tcp.local.`.
    public var instance: DNSName
    /// The host name from the SRV record.
    public var host: DNSName
    /// The port from the SRV record.
    public var port: UInt16
    /// The TXT key/value pairs (RFC 6763 §6.4; keys lower-cased).
    public var txt: [String: String?]
    /// The host's addresses from A and AAAA records, sorted.
    public var addresses: [IPAddress]

    /// Creates a description of a resolved instance.
    public init(instance: DNSName, host: DNSName, port: UInt16, txt: [String: String?], addresses: [IPAddress]) {
        self.instance = instance
        self.host = host
        self.port = port
        self.txt = txt
        self.addresses = addresses
    }

    /// The human-readable instance name (the first label).
    public var name: String { instance.firstLabel ?? "" }

    /// The `peer` TXT value, if present.
    public var peerID: String? { txt["peer"] ?? nil }

    /// A one-line rendering.
    public var description: String {
        "\(instance) at \(host):\(port) \(addresses.map(\.description)) \(txt)"
    }
}
