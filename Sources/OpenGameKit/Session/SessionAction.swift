import OpenGameKitSessionWire
/// Something ``SessionCore`` asks its driver to do, in order.
enum SessionAction: Equatable, Sendable {
    /// Open a TCP connection to `host:port`; report ``SessionCore/outboundOpened(_:)`` or ``SessionCore/outboundFailed(_:)``,
    /// then ``SessionCore/secured(_:datagrams:now:)`` once its handshake ends.
    case open(ConnectionID, host: String, port: UInt16)
    /// Send a frame on a connection.
    case send(SessionFrame, on: ConnectionID)
    /// Close a connection once the frames already sent on it are written.
    case close(ConnectionID)
    /// Tell the delegate or data handler.
    case notify(SessionEvent)
}
