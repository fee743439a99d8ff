import Foundation
import LANTestSupport
import OpenGameKitLAN
import Testing

@Suite(
    "Interoperability with python-zeroconf",
    .serialized,
    .enabled(if: ZeroconfPeer.isAvailable, Comment(rawValue: ZeroconfPeer.skipMessage)),
    .enabled(if: LoopbackMulticast.isAvailable, Comment(rawValue: LoopbackMulticast.skipMessage))
)
struct ZeroconfInteropTests {
    struct Resolved: Decodable {
        var name: String
        var server: String
        var port: Int
        var txt: [String: String?]
        var addresses: [String]
    }

    @Test(.timeLimit(.minutes(1)))
    func zeroconfBrowserResolvesOurAdvertisement() async throws {
        let type = try ServiceType(sessionID: "ogk-zcb\(UInt16.random(in: 100...999))")
        let advertiser = ServiceAdvertiser(
            registration: ServiceRegistration(serviceType: type, displayName: "Swift Game", port: 47010, peerID: "swift-peer-1", ipv4Addresses: []),
            interfaceName: LoopbackMulticast.interface
        )
        try await advertiser.start()
        let helper = try ZeroconfPeer.Running(["browse", type.description, "15", "--interface", "127.0.0.1"])
        let result = await helper.finish(timeout: .seconds(25))
        await advertiser.stop()
        #expect(result.status == 0, "zeroconf browse failed: \(result.stderr)")
        let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let resolved = try JSONDecoder().decode(Resolved.self, from: Data(line.utf8))
        #expect(resolved.name == "Swift Game.\(type.description)")
        #expect(resolved.port == 47010)
        #expect(resolved.txt["peer"] == .some("swift-peer-1"))
        #expect(resolved.txt["v"] == .some("1"))
        #expect(resolved.addresses == ["127.0.0.1"])
        #expect(await advertiser.malformedPacketCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func ourBrowserFindsZeroconfRegistration() async throws {
        let type = try ServiceType(sessionID: "ogk-zcr\(UInt16.random(in: 100...999))")
        let browser = ServiceBrowser(serviceType: type, interfaceName: LoopbackMulticast.interface)
        try await browser.start()
        let helper = try ZeroconfPeer.Running(["register", type.description, "Python Game", "47011", "py-peer-7", "30", "--interface", "127.0.0.1"])
        let found = await firstEvent(browser.events, timeout: .seconds(15)) { if case .found = $0 { true } else { false } }
        guard case .found(let service) = found else {
            helper.closeInput()
            let result = await helper.finish(timeout: .seconds(5))
            Issue.record("our browser did not find the zeroconf service; helper said: \(result.stdout) \(result.stderr)")
            await browser.stop()
            return
        }
        #expect(service.name == "Python Game")
        #expect(service.port == 47011)
        #expect(service.peerID == "py-peer-7")
        #expect(service.addresses == [.v4(IPv4Address(127, 0, 0, 1))])
        // zeroconf sends goodbyes on unregister: our browser reports the instance lost.
        helper.closeInput()
        let lost = await firstEvent(browser.events, timeout: .seconds(10)) { if case .lost = $0 { true } else { false } }
        #expect(lost == .lost(instance: service.instance))
        _ = await helper.finish(timeout: .seconds(5))
        #expect(await browser.malformedPacketCount == 0)
        await browser.stop()
    }
}

/// CI sets `GAMECENTER_REQUIRE_LAN_PEERS=1`: there the interoperability tests must run, not be skipped.
@Test func lanPeersAreAvailableWhenRequired() {
    if lanPeersRequired {
        #expect(ZeroconfPeer.isAvailable, "\(ZeroconfPeer.skipMessage)")
        #expect(LoopbackMulticast.isAvailable, "\(LoopbackMulticast.skipMessage)")
    }
}
