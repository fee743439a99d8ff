import NIOCore
import NIOPosix

/// Routes a `FaultyUDPProxy`'s datagrams: client datagrams to the target through each client's own upstream
/// socket, the server's answers back to that client, with the core's verdict applied to each one.
///
/// Confined to one event loop, which every socket of the proxy also uses; other threads reach it only through
/// `NIOLoopBound`.
final class UDPRouter {
    /// How long a datagram held back for reordering waits for a later one before it is sent anyway.
    static let reorderHoldLimit = TimeAmount.milliseconds(50)

    /// Fault settings, counters and capture.
    private let core: UDPProxyCore
    /// The server every client's datagrams go to.
    private let target: SocketAddress
    /// The loop the router and all its sockets run on.
    private let eventLoop: any EventLoop
    /// The proxy's listening socket, which clients send to and receive answers from.
    var front: (any Channel)?
    /// Every client seen so far, by address.
    private var routes: [SocketAddress: UDPClientRoute] = [:]
    /// The client that sent the latest datagram (the one `inject` sends as).
    private var mostRecentClient: UDPClientRoute?
    /// Set by `stop`; nothing is forwarded after it.
    private var isStopped = false

    /// Creates a router sending to `target`; set `front` once the listening socket exists.
    init(core: UDPProxyCore, target: SocketAddress, eventLoop: any EventLoop) {
        self.core = core
        self.target = target
        self.eventLoop = eventLoop
    }

    /// Handles a datagram from a client: opens the client's upstream socket on first sight, then forwards it.
    func received(_ datagram: ByteBuffer, fromClient address: SocketAddress) {
        guard !isStopped else { return }
        let route = routes[address] ?? openRoute(for: address)
        mostRecentClient = route
        pass(datagram, toward: .toServer, via: route)
    }

    /// Handles a datagram on a client's upstream socket: forwards it to the client if it came from the target.
    func received(_ datagram: ByteBuffer, fromServer address: SocketAddress, for route: UDPClientRoute) {
        guard !isStopped, address == target else { return }
        pass(datagram, toward: .toClient, via: route)
    }

    /// Sends `bytes` to the target from the most recent client's upstream socket, bypassing every fault.
    func inject(_ bytes: [UInt8]) -> EventLoopFuture<Void> {
        guard let route = mostRecentClient else {
            return eventLoop.makeFailedFuture(NetworkFaultProxyError.noClientYet)
        }
        let datagram = ByteBuffer(bytes: bytes)
        guard let upstream = route.upstream else {
            route.awaitingUpstream.append(datagram)
            return eventLoop.makeSucceededVoidFuture()
        }
        return upstream.writeAndFlush(AddressedEnvelope(remoteAddress: target, data: datagram))
    }

    /// Drops held datagrams and closes every socket; the future completes when all are closed.
    func stop() -> EventLoopFuture<Void> {
        isStopped = true
        var channels = front.map { [$0] } ?? []
        for route in routes.values {
            for held in route.held.values { held.release.cancel() }
            route.held.removeAll()
            if let upstream = route.upstream { channels.append(upstream) }
        }
        routes.removeAll()
        mostRecentClient = nil
        return EventLoopFuture.andAllComplete(channels.map { $0.close() }, on: eventLoop)
    }

    /// Registers `client` and binds its upstream socket on loopback, in the target's address family.
    private func openRoute(for client: SocketAddress) -> UDPClientRoute {
        let route = UDPClientRoute(client: client)
        routes[client] = route
        let bound = NIOLoopBound((router: self, route: route), eventLoop: eventLoop)
        DatagramBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let (router, route) = bound.value
                    try channel.pipeline.syncOperations.addHandler(
                        UDPDatagramHandler(router: router, role: .upstream(route))
                    )
                }
            }
            .bind(host: target.protocol == .inet6 ? "::1" : "127.0.0.1", port: 0)
            .assumeIsolated()
            .whenComplete { result in
                self.upstreamBound(result, for: route)
            }
        return route
    }

    /// Finishes opening a route: sends what waited for the socket, or forgets the route so the next datagram
    /// tries again.
    private func upstreamBound(_ result: Result<any Channel, any Error>, for route: UDPClientRoute) {
        switch result {
        case .failure:
            route.awaitingUpstream.removeAll()
            if routes[route.client] === route { routes[route.client] = nil }
        case .success(let channel):
            guard !isStopped else {
                channel.close(promise: nil)
                return
            }
            route.upstream = channel
            for datagram in route.awaitingUpstream {
                channel.write(AddressedEnvelope(remoteAddress: target, data: datagram), promise: nil)
            }
            route.awaitingUpstream.removeAll()
            channel.flush()
        }
    }

    /// Applies the core's verdict to a datagram: drop, send (once or twice), or hold back behind the next one.
    private func pass(_ datagram: ByteBuffer, toward direction: UDPProxyCore.Direction, via route: UDPClientRoute) {
        guard let verdict = core.judge(datagram, going: direction) else { return }
        if let held = route.held.removeValue(forKey: direction) {
            held.release.cancel()
            send(datagram, copies: verdict.copies, toward: direction, via: route)
            send(held.bytes, copies: held.copies, toward: direction, via: route)
            core.noteReordered()
        } else if verdict.holdBack {
            let release = eventLoop.assumeIsolated().scheduleTask(in: Self.reorderHoldLimit) {
                self.releaseHeld(toward: direction, via: route)
            }
            route.held[direction] = UDPClientRoute.HeldDatagram(
                bytes: datagram,
                copies: verdict.copies,
                release: release
            )
        } else {
            send(datagram, copies: verdict.copies, toward: direction, via: route)
        }
    }

    /// Sends the datagram held in `direction` when no later one came to overtake it.
    private func releaseHeld(toward direction: UDPProxyCore.Direction, via route: UDPClientRoute) {
        guard let held = route.held.removeValue(forKey: direction) else { return }
        send(held.bytes, copies: held.copies, toward: direction, via: route)
    }

    /// Writes a datagram `copies` times: to the server from the client's upstream socket (queued while it binds),
    /// or to the client from the listening socket.
    private func send(
        _ datagram: ByteBuffer,
        copies: Int,
        toward direction: UDPProxyCore.Direction,
        via route: UDPClientRoute
    ) {
        for _ in 0..<copies {
            switch direction {
            case .toServer:
                if let upstream = route.upstream {
                    upstream.writeAndFlush(AddressedEnvelope(remoteAddress: target, data: datagram), promise: nil)
                } else {
                    route.awaitingUpstream.append(datagram)
                }
            case .toClient:
                front?.writeAndFlush(AddressedEnvelope(remoteAddress: route.client, data: datagram), promise: nil)
            }
        }
    }
}
