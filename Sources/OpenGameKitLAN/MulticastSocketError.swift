/// Why a ``MulticastSocket`` could not be opened.
public enum MulticastSocketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No interface with that name has an IPv4 address.
    case interfaceNotFound(String)
    /// No non-loopback IPv4 interface with multicast support exists.
    case noMulticastInterface
    /// The interface exists but multicast is disabled on it (for `lo`: `ip link set lo multicast on`).
    case multicastDisabled(String)

    /// A human-readable explanation.
    public var description: String {
        switch self {
        case .interfaceNotFound(let name): "no IPv4 interface named \(name)"
        case .noMulticastInterface: "no non-loopback IPv4 interface with multicast support"
        case .multicastDisabled(let name): "multicast is disabled on \(name) (try: ip link set \(name) multicast on)"
        }
    }
}
