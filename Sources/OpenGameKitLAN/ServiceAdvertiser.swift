import Logging
import NIOCore
import NIOPosix

/// Advertises one game session on the LAN: owns a ``MulticastSocket`` and a ``Responder``, runs its timers,
/// and reports ``ResponderEvent``s.
///
/// If the registration lists no IPv4 addresses, the socket interface's address is advertised.
/// Malformed packets are dropped and counted in ``malformedPacketCount``.
public actor ServiceAdvertiser {
    /// Events from the responder (registered, renamed, stopped…).
    public nonisolated let events: AsyncStream<ResponderEvent>
    /// The number of received datagrams that failed to parse.
    public var malformedPacketCount: Int { transport?.malformedPacketCount ?? 0 }

    private let eventContinuation: AsyncStream<ResponderEvent>.Continuation
    private var registration: ServiceRegistration
    private let interfaceName: String?
    private let port: Int
    private let randomSource: RandomSource
    private let logger: Logger
    private var responder: Responder?
    private var transport: MDNSTransport?
    private var timerTask: Task<Void, Never>?
    private var sendTasks: [Task<Void, Never>] = []

    /// Creates an advertiser; call ``start()`` to begin. `interfaceName` `nil` picks the default interface.
    public init(
        registration: ServiceRegistration,
        interfaceName: String? = nil,
        port: Int = MulticastSocket.mdnsPort,
        randomSource: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        logger: Logger = Logger(label: "OpenGameKitLAN.ServiceAdvertiser")
    ) {
        self.registration = registration
        self.interfaceName = interfaceName
        self.port = port
        self.randomSource = RandomSource(randomSource)
        self.logger = logger
        (events, eventContinuation) = AsyncStream.makeStream(of: ResponderEvent.self)
    }

    /// The instance name currently claimed (it may change after a conflict), or `nil` before ``start()``.
    public var instanceName: DNSName? { responder?.instanceName }

    /// The host name currently claimed, or `nil` before ``start()``.
    public var hostName: DNSName? { responder?.hostName }

    /// Opens the socket and starts probing.
    public func start() async throws {
        guard responder == nil else { return }
        let transport = try await MDNSTransport.open(interfaceName: interfaceName, port: port, logger: logger) { [weak self] message, source in
            await self?.handle(message, from: source)
        }
        self.transport = transport
        if registration.ipv4Addresses.isEmpty {
            registration.ipv4Addresses = [transport.socket.interfaceAddress]
        }
        var responder = Responder(registration: registration, randomSource: randomSource)
        let actions = responder.start(now: .now)
        self.responder = responder
        perform(actions, replyTo: nil)
    }

    /// Sends the goodbye, closes the socket and finishes ``events``.
    public func stop() async {
        guard var responder else { return }
        let actions = responder.stop(now: .now)
        self.responder = responder
        timerTask?.cancel()
        for task in sendTasks { task.cancel() }
        for action in actions {
            switch action {
            case .send(let message, _, _):
                await send(message, to: nil)
            case .event(let event):
                eventContinuation.yield(event)
            }
        }
        await transport?.close()
        eventContinuation.finish()
    }

    private func handle(_ message: DNSMessage, from source: SocketAddress) {
        guard var responder else { return }
        let actions = responder.receive(message, sourcePort: UInt16(clamping: source.port ?? 0), now: .now)
        self.responder = responder
        perform(actions, replyTo: source)
    }

    private func tick() {
        guard var responder else { return }
        let actions = responder.tick(now: .now)
        self.responder = responder
        perform(actions, replyTo: nil)
    }

    private func perform(_ actions: [ResponderAction], replyTo source: SocketAddress?) {
        sendTasks.removeAll { $0.isCancelled }
        for action in actions {
            switch action {
            case .send(let message, let destination, let at):
                let target = destination == .replyToSender ? source : nil
                if destination == .replyToSender && source == nil { continue }
                if at <= .now {
                    sendTasks.append(Task { await self.send(message, to: target) })
                } else {
                    sendTasks.append(
                        Task {
                            try? await Task.sleep(until: at, clock: .continuous)
                            guard !Task.isCancelled else { return }
                            await self.send(message, to: target)
                        })
                }
            case .event(let event):
                eventContinuation.yield(event)
            }
        }
        rescheduleTimer()
    }

    private func rescheduleTimer() {
        timerTask?.cancel()
        guard let deadline = responder?.nextDeadline else { return }
        timerTask = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            self.tick()
        }
    }

    private func send(_ message: DNSMessage, to destination: SocketAddress?) async {
        await transport?.send(message, to: destination)
    }
}
