import LANTestSupport
import NetworkFaultProxy
import OpenGameKitLAN
import Testing

@Suite("Live mDNS on loopback", .serialized, .enabled(if: LoopbackMulticast.isAvailable, Comment(rawValue: LoopbackMulticast.skipMessage)))
struct LiveLoopbackTests {
    @Test(.timeLimit(.minutes(1)))
    func advertiserIsSeenByBrowserAndGoodbyeIsLost() async throws {
        let type = try ServiceType(sessionID: "ogk-live\(UInt16.random(in: 100...999))")
        let registration = ServiceRegistration(serviceType: type, displayName: "Live Game ✓", port: 47001, peerID: "live-peer", ipv4Addresses: [])
        let browser = ServiceBrowser(serviceType: type, interfaceName: LoopbackMulticast.interface)
        try await browser.start()
        let advertiser = ServiceAdvertiser(registration: registration, interfaceName: LoopbackMulticast.interface)
        try await advertiser.start()

        let registered = await firstEvent(advertiser.events, timeout: .seconds(20)) { if case .registered = $0 { true } else { false } }
        #expect(registered != nil)
        let found = await firstEvent(browser.events, timeout: .seconds(20)) { if case .found = $0 { true } else { false } }
        guard case .found(let service) = found else {
            Issue.record("browser did not find the advertised service")
            await advertiser.stop(); await browser.stop()
            return
        }
        #expect(service.name == "Live Game ✓")
        #expect(service.port == 47001)
        #expect(service.peerID == "live-peer")
        #expect(service.txt["v"] == .some("1"))
        #expect(service.addresses == [.v4(IPv4Address(127, 0, 0, 1))])

        await advertiser.stop()
        let lost = await firstEvent(browser.events, timeout: .seconds(15)) { if case .lost = $0 { true } else { false } }
        #expect(lost == .lost(instance: service.instance))
        #expect(await browser.malformedPacketCount == 0)
        await browser.stop()
    }

    @Test(.timeLimit(.minutes(1)))
    func secondAdvertiserWithSameNameIsRenamed() async throws {
        let type = try ServiceType(sessionID: "ogk-dup\(UInt16.random(in: 100...999))")
        let first = ServiceAdvertiser(
            registration: ServiceRegistration(serviceType: type, displayName: "Same", port: 47002, peerID: "one", ipv4Addresses: []),
            interfaceName: LoopbackMulticast.interface)
        try await first.start()
        _ = await firstEvent(first.events, timeout: .seconds(20)) { if case .registered = $0 { true } else { false } }
        let second = ServiceAdvertiser(
            registration: ServiceRegistration(serviceType: type, displayName: "Same", port: 47003, peerID: "two", ipv4Addresses: []),
            interfaceName: LoopbackMulticast.interface)
        try await second.start()
        let registered = await firstEvent(second.events, timeout: .seconds(8)) { if case .registered = $0 { true } else { false } }
        #expect(registered == .registered(instanceName: type.domainName.prepending("Same (2)")))
        await second.stop()
        await first.stop()
    }

    @Test(.timeLimit(.minutes(1)))
    func malformedPacketsAreDroppedAndCounted() async throws {
        let type = try ServiceType(sessionID: "ogk-bad\(UInt16.random(in: 100...999))")
        // A private port keeps the garbage away from the other live suites running in parallel.
        let port = Int.random(in: 40000...49999)
        let browser = ServiceBrowser(serviceType: type, interfaceName: LoopbackMulticast.interface, port: port)
        try await browser.start()
        let sender = try await MulticastSocket.open(interfaceName: LoopbackMulticast.interface, port: port)
        #expect(sender.interfaceAddress == IPv4Address(127, 0, 0, 1))
        try await sender.send([0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0xC0, 0x0C])  // self-referencing pointer
        try await sender.send([1, 2, 3])
        try await waitUntil("the browser counted both malformed packets") { await browser.malformedPacketCount >= 2 }
        #expect(await browser.malformedPacketCount == 2)
        #expect(await browser.services.isEmpty)
        await sender.close()
        await browser.stop()
    }
}
