/// Something a ``Browser`` reports to its owner.
public enum BrowserEvent: Hashable, Sendable {
    /// An instance became fully resolved (PTR, SRV, TXT and at least one address known).
    case found(DiscoveredService)
    /// A resolved instance's host, port, TXT or addresses changed.
    case updated(DiscoveredService)
    /// A previously found instance disappeared (goodbye, expiry, or its records were flushed).
    case lost(instance: DNSName)
}
