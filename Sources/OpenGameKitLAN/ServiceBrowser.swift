import Logging
import NIOCore
import NIOPosix

/// Browses the LAN for one game's service type: owns a ``MulticastSocket`` and a ``Browser``, runs its
/// timers, and reports ``BrowserEvent``s.
///
/// Responses from a source port other than 5353 are ignored (RFC 6762 §6). Malformed packets are dropped
/// and counted in ``malformedPacketCount``.
public actor ServiceBrowser {
    /// Found/updated/lost events.
    public nonisolated let events: AsyncStream<BrowserEvent>
    /// The number of received datagrams that failed to parse.
    public var malformedPacketCount: Int { malformedBeforeStop + (transport?.malformedPacketCount ?? 0) }

    private let eventContinuation: AsyncStream<BrowserEvent>.Continuation
    private let interfaceName: String?
    private let port: Int
    private let logger: Logger
    private var browser: Browser
    private var transport: MDNSTransport?
    private var malformedBeforeStop = 0
    private var timerTask: Task<Void, Never>?

    /// Creates a browser for `serviceType`; call ``start()`` to begin. `interfaceName` `nil` picks the default interface.
    public init(
        serviceType: ServiceType,
        interfaceName: String? = nil,
        port: Int = MulticastSocket.mdnsPort,
        logger: Logger = Logger(label: "OpenGameKitLAN.ServiceBrowser")
    ) {
        self.browser = Browser(serviceType: serviceType)
        self.interfaceName = interfaceName
        self.port = port
        self.logger = logger
        (events, eventContinuation) = AsyncStream.makeStream(of: BrowserEvent.self)
    }

    /// The instances currently found.
    public var services: [DiscoveredService] {
        browser.found.values.sorted { $0.instance.description < $1.instance.description }
    }

    /// Opens the socket and sends the first query.
    public func start() async throws {
        guard transport == nil else { return }
        transport = try await MDNSTransport.open(interfaceName: interfaceName, port: port, logger: logger) { [weak self] message, source in
            await self?.handle(message, from: source)
        }
        perform(browser.start(now: .now))
    }

    /// Stops browsing, closes the socket and finishes ``events``.
    public func stop() async {
        browser.stop()
        timerTask?.cancel()
        if let transport {
            self.transport = nil
            malformedBeforeStop += transport.malformedPacketCount
            await transport.close()
        }
        eventContinuation.finish()
    }

    private func handle(_ message: DNSMessage, from source: SocketAddress) {
        guard source.port == MulticastSocket.mdnsPort || port != MulticastSocket.mdnsPort else { return }
        perform(browser.receive(message, now: .now))
    }

    private func tick() {
        perform(browser.tick(now: .now))
    }

    private func perform(_ actions: [BrowserAction]) {
        for action in actions {
            switch action {
            case .send(let message, _):
                Task { await self.send(message) }
            case .event(let event):
                eventContinuation.yield(event)
            }
        }
        timerTask?.cancel()
        guard let deadline = browser.nextDeadline else { return }
        timerTask = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            self.tick()
        }
    }

    private func send(_ message: DNSMessage) async {
        await transport?.send(message)
    }
}
