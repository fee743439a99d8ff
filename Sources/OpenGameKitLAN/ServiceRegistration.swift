/// What a ``Responder`` advertises: one DNS-SD service instance of a game on this host.
public struct ServiceRegistration: Hashable, Sendable {
    /// The game's service type, e.g. `_mygame._tcp.local.`.
    public var serviceType: ServiceType
    /// The human-readable instance name (UTF-8); truncated to fit the 63-byte DNS label limit.
    public var displayName: String
    /// The TCP port the game session listens on.
    public var port: UInt16
    /// The peer identifier published as `peer=<peerID>` in the TXT record.
    public var peerID: String
    /// The IPv4 addresses published as `A` records for the host name.
    public var ipv4Addresses: [IPv4Address]
    /// The first label of the host name (`<hostLabel>.local.`); `nil` picks `ogk-` plus 8 random hex digits.
    public var hostLabel: String?
    /// Extra TXT key/value pairs besides `peer` and `v`.
    public var extraTXT: [String: String?]

    /// Creates a registration.
    public init(
        serviceType: ServiceType,
        displayName: String,
        port: UInt16,
        peerID: String,
        ipv4Addresses: [IPv4Address],
        hostLabel: String? = nil,
        extraTXT: [String: String?] = [:]
    ) {
        self.serviceType = serviceType
        self.displayName = displayName
        self.port = port
        self.peerID = peerID
        self.ipv4Addresses = ipv4Addresses
        self.hostLabel = hostLabel
        self.extraTXT = extraTXT
    }

    /// The TXT record: `extraTXT` plus `peer=<peerID>` and `v=1`.
    public var txtRecord: TXTRecord {
        var pairs = extraTXT
        pairs["peer"] = .some(peerID)
        pairs["v"] = .some("1")
        return TXTRecord(pairs)
    }
}
