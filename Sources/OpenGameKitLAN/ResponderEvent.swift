/// Something a ``Responder`` reports to its owner.
public enum ResponderEvent: Hashable, Sendable {
    /// Probing finished without conflict; the instance is now announced under `instanceName`.
    case registered(instanceName: DNSName)
    /// Another host already uses a name; the responder renamed and probes again.
    case renamed(from: DNSName, to: DNSName)
    /// A conflicting record appeared after registration; the responder probes its names again (RFC 6762 §9).
    case conflictDetected(DNSName)
    /// The responder sent its goodbye and stopped.
    case stopped
}
