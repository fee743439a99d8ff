extension GameCenterApp {
    /// How long an HTTP connection may take over each part of a request, and how many may be open at once.
    ///
    /// Every connection holds a file descriptor; the caps keep the HTTP connections below the process's limit so
    /// that the database, the UDP socket and files can still be opened when clients open as many connections as
    /// they can.
    public struct ConnectionLimits: Sendable, Equatable {
        /// Most bytes of a request's line and headers together (larger: `431`).
        public static let maximumHeaderBytes = 80 * 1024
        /// Most headers in a request (more: `431`).
        public static let maximumHeaderCount = 100

        /// How long a request's line and headers may take to arrive, from their first byte (for a new connection:
        /// from its opening).
        public var headerTimeout: Duration = .seconds(10)
        /// How long a request's body may take to arrive, from the end of its headers.
        public var bodyTimeout: Duration = .seconds(30)
        /// How long a connection may stay open with no request after its last response.
        public var idleTimeout: Duration = .seconds(60)
        /// How long bytes the server wrote may wait while the client takes none of them (it stopped reading: a
        /// pipelined request's answers, a realtime channel's events, a relay member's messages); then the connection
        /// is closed. See ``WriteDeadline``.
        public var writeTimeout: Duration = .seconds(20)
        /// Most HTTP and WebSocket connections open at once; more are answered `503` and closed.
        public var maxConnections: Int
        /// Most connections open at once from one client address; more are answered `503` and closed.
        public var maxConnectionsPerAddress: Int
        /// Most connections over a cap being answered `503` at once; more are closed at once, unanswered.
        ///
        /// A refused connection holds a descriptor until its answer is written: during a flood, thousands of them
        /// took the descriptors kept for the database, files and the UDP socket. The refusals' descriptors come out
        /// of the connections' share instead.
        public var maxRefusals: Int

        /// Caps derived from the process's file descriptor limit: an eighth of it (at least 96) is kept for
        /// everything that is not a connection, and a thirty-second (8 to 64) for connections being refused.
        ///
        /// The server's own files and sockets take about 31 descriptors. The rest of the reserve is headroom: a
        /// connection is counted when its event loop sets it up, after it was accepted, so during a flood on a busy
        /// machine accepted connections wait uncounted (25 past the caps were seen on two loaded cores).
        public init(descriptorLimit: Int = FileDescriptorLimit.current) {
            let refusals = min(64, max(8, descriptorLimit / 32))
            self.init(maxConnections: max(1, descriptorLimit - max(96, descriptorLimit / 8) - refusals), maxRefusals: refusals)
        }

        /// At most `maxConnections`, of which one address may take a quarter (at most 256: enough for the devices
        /// of a household or a school behind one NAT address), and `maxRefusals` being refused.
        public init(maxConnections: Int, maxRefusals: Int = 32) {
            self.maxConnections = maxConnections
            self.maxRefusals = maxRefusals
            maxConnectionsPerAddress = max(1, min(256, maxConnections / 4))
        }
    }
}
