/// Errors thrown by `FaultyTCPProxy` and `FaultyUDPProxy`.
public enum NetworkFaultProxyError: Error, Equatable, Sendable {
    /// The listening socket reported no local port after binding; the proxy could not start.
    case noLocalPort
    /// `FaultyUDPProxy.inject` was called before any client had sent a datagram, so there is no upstream socket.
    case noClientYet
}
