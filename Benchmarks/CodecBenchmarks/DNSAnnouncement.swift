import OpenGameKitLAN

/// What a GKSession advertiser multicasts: PTR, SRV, TXT and an address for one service instance.
enum DNSAnnouncement {
    /// A response announcing one session peer, as the responder sends it.
    static func sessionService() -> DNSMessage {
        let service: DNSName = "_ogk-battle._udp.local"
        let instance: DNSName = "Player One (4F2A)._ogk-battle._udp.local"
        let host: DNSName = "player-one-4f2a.local"
        return DNSMessage.response(
            answers: [
                DNSResourceRecord(name: service, data: .ptr(instance), ttl: 4500),
                DNSResourceRecord(name: instance, data: .srv(priority: 0, weight: 0, port: 51_234, target: host), ttl: 120, cacheFlush: true),
                DNSResourceRecord(
                    name: instance, data: .txt(TXTRecord(["peer": "4F2A9C01", "name": "Player One", "mode": "peer", "v": "1"])), ttl: 4500,
                    cacheFlush: true),
            ],
            additionals: [DNSResourceRecord(name: host, data: .a(IPv4Address(192, 168, 1, 20)), ttl: 120, cacheFlush: true)]
        )
    }
}
