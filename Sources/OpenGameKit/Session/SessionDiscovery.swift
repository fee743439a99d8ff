import Logging
import OpenGameKitLAN

/// Runs a session's mDNS/DNS-SD side: advertises it (server and peer modes) and browses for others (client and
/// peer modes) through OpenGameKitLAN, and reports peers by the `peer` id in their TXT record.
actor SessionDiscovery {
    /// What discovery reports: a peer found or updated (id, display name, IPv4 address, TCP port), or lost.
    enum Change: Sendable {
        /// A peer was found or its data changed.
        case found(peerID: String, displayName: String, host: String, port: UInt16)
        /// A peer said goodbye or expired.
        case lost(peerID: String)
    }

    private let serviceType: ServiceType
    private let interfaceName: String?
    private let mdnsPort: Int
    private let logger: Logger
    private let onChange: @Sendable (Change) -> Void
    private var advertiser: ServiceAdvertiser?
    private var browser: ServiceBrowser?
    private var browseTask: Task<Void, Never>?

    /// Creates an idle discovery; `onChange` is called for every change while browsing.
    init(serviceType: ServiceType, interfaceName: String?, mdnsPort: Int, logger: Logger, onChange: @escaping @Sendable (Change) -> Void) {
        self.serviceType = serviceType
        self.interfaceName = interfaceName
        self.mdnsPort = mdnsPort
        self.logger = logger
        self.onChange = onChange
    }

    /// Starts advertising `registration` (if given) and browsing (if `browse`).
    func start(advertising registration: ServiceRegistration?, browse: Bool) async throws {
        await stop()
        if let registration {
            let advertiser = ServiceAdvertiser(registration: registration, interfaceName: interfaceName, port: mdnsPort, logger: logger)
            try await advertiser.start()
            self.advertiser = advertiser
        }
        if browse {
            let browser = ServiceBrowser(serviceType: serviceType, interfaceName: interfaceName, port: mdnsPort, logger: logger)
            do {
                try await browser.start()
            } catch {
                await stop()
                throw error
            }
            self.browser = browser
            let onChange = self.onChange
            browseTask = Task {
                var peers: [DNSName: String] = [:]
                for await event in browser.events {
                    switch event {
                    case .found(let service), .updated(let service):
                        guard let peerID = service.peerID, !peerID.isEmpty,
                            let host = service.addresses.lazy.compactMap({ if case .v4(let v4) = $0 { v4.description } else { nil } }).first
                        else { continue }
                        if let previous = peers[service.instance], previous != peerID { onChange(.lost(peerID: previous)) }
                        peers[service.instance] = peerID
                        let name = service.txt["name"].flatMap { $0 } ?? service.name
                        onChange(.found(peerID: peerID, displayName: name, host: host, port: service.port))
                    case .lost(let instance):
                        if let peerID = peers.removeValue(forKey: instance) { onChange(.lost(peerID: peerID)) }
                    }
                }
            }
        }
    }

    /// Sends the goodbye (if advertising) and stops browsing.
    func stop() async {
        if let advertiser {
            self.advertiser = nil
            await advertiser.stop()
        }
        if let browser {
            self.browser = nil
            await browser.stop()
        }
        browseTask?.cancel()
        browseTask = nil
    }
}
