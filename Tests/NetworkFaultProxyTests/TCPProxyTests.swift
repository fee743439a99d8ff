import NetworkFaultProxy
import Testing

/// `FaultyTCPProxy` between a test client and an echo server.
@Suite(.timeLimit(.minutes(1)))
struct TCPProxyTests {
    /// A megabyte of random bytes, the same in every run (unless `OPENGAMEKIT_FUZZ_SEED` says otherwise).
    private static func megabyte() -> [UInt8] {
        var generator = TestSeed(default: 0x1_0000).generator
        return (0..<1_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Sends `bytes` through `proxy` to the echo server and returns what came back.
    private static func roundTrip(_ bytes: [UInt8], through proxy: FaultyTCPProxy) async throws -> [UInt8] {
        let client = try await TCPTestClient.connect(port: proxy.port)
        try await client.send(bytes)
        try await client.waitForBytes(bytes.count, within: .seconds(30))
        await client.close()
        return client.received
    }

    @Test func megabyteRoundTripIsByteExactWithoutDelay() async throws {
        let server = try await TCPEchoServer.start()
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        let sent = Self.megabyte()
        let received = try await Self.roundTrip(sent, through: proxy)
        #expect(received.count == sent.count)
        let identical = received == sent
        #expect(identical)
        #expect(proxy.acceptedConnections == 1)
        await proxy.stop()
        await server.stop()
    }

    @Test func megabyteRoundTripIsByteExactWithRandomDelay() async throws {
        let server = try await TCPEchoServer.start()
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port, seed: 1)
        proxy.setDelay(.zero ... .milliseconds(20))
        let sent = Self.megabyte()
        let received = try await Self.roundTrip(sent, through: proxy)
        #expect(received.count == sent.count)
        let identical = received == sent
        #expect(identical)
        await proxy.stop()
        await server.stop()
    }

    @Test func delayAppliesInBothDirections() async throws {
        let server = try await TCPEchoServer.start()
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        let client = try await TCPTestClient.connect(port: proxy.port)
        try await client.send(Array("warm".utf8))
        try await client.waitForBytes(4)

        proxy.setDelay(.milliseconds(400) ... .milliseconds(400))
        let clock = ContinuousClock()
        let start = clock.now
        try await client.send(Array("ping".utf8))
        try await client.waitForBytes(8)
        #expect(clock.now - start >= .milliseconds(800))

        // Removing a delay takes effect: after a 30 s delay is set and removed, the echo arrives within the 10 s wait
        // (no upper time bound is asserted: a loaded machine stretches any round trip).
        proxy.setDelay(.seconds(30) ... .seconds(30))
        proxy.setDelay(nil)
        try await client.send(Array("pong".utf8))
        try await client.waitForBytes(12, within: .seconds(10))
        #expect(client.received == Array("warmpingpong".utf8))
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func cutAllConnectionsClosesTheClientAndDiscardsHeldBytes() async throws {
        let server = try await TCPEchoServer.start()
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        let client = try await TCPTestClient.connect(port: proxy.port)
        try await client.send(Array("ping".utf8))
        try await client.waitForBytes(4)

        proxy.setDelay(.seconds(30) ... .seconds(30))
        try await client.send(Array("in flight".utf8))
        try await waitUntil("the proxy holds the 9 bytes in flight") { proxy.heldBytes == 9 }
        proxy.cutAllConnections()
        #expect(proxy.cutConnections == 1)
        try await client.waitForClose()

        // Dropped, not merely delayed: they can never reach the server.
        try await waitUntil("the cut discarded the 9 bytes in flight") { proxy.discardedBytes == 9 }
        #expect(proxy.heldBytes == 0)
        #expect(server.receivedBytes == 4)
        #expect(proxy.acceptedConnections == 1)
        #expect(proxy.cutConnections == 1)

        proxy.setDelay(nil)
        let later = try await TCPTestClient.connect(port: proxy.port)
        try await later.send(Array("after".utf8))
        try await later.waitForBytes(5)
        #expect(proxy.cutConnections == 1)
        await later.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func refusingClosesNewConnectionsOnly() async throws {
        let server = try await TCPEchoServer.start()
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        let existing = try await TCPTestClient.connect(port: proxy.port)
        try await existing.send(Array("one".utf8))
        try await existing.waitForBytes(3)

        proxy.setRefusing(true)
        #expect(await TCPTestClient.isRefused(port: proxy.port))
        try await existing.send(Array("two".utf8))
        try await existing.waitForBytes(6)
        #expect(!existing.isClosed)

        proxy.setRefusing(false)
        let fresh = try await TCPTestClient.connect(port: proxy.port)
        try await fresh.send(Array("three".utf8))
        try await fresh.waitForBytes(5)
        #expect(!fresh.isClosed)
        #expect(proxy.acceptedConnections == 3)
        #expect(proxy.cutConnections == 0)
        await existing.close()
        await fresh.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func blackHoleSwallowsBytesButKeepsTheConnection() async throws {
        let server = try await TCPEchoServer.start()
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        let client = try await TCPTestClient.connect(port: proxy.port)
        try await client.send(Array("hi".utf8))
        try await client.waitForBytes(2)

        proxy.setBlackHole(true)
        try await client.send(Array("lost".utf8))
        // Swallowed, not merely delayed: they can never reach the server or come back.
        try await waitUntil("the black hole swallowed the 4 bytes") { proxy.swallowedBytes == 4 }
        #expect(client.received.count == 2)
        #expect(!client.isClosed)
        #expect(server.receivedBytes == 2)

        proxy.setBlackHole(false)
        try await client.send(Array("back".utf8))
        try await client.waitForBytes(6)
        // The stream is ordered: had "lost" got through, it would be in these bytes, before "back".
        #expect(client.received == Array("hiback".utf8))
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func cutAfterBytesCutsEveryConnectionRepeatedly() async throws {
        let server = try await TCPEchoServer.start()
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port, seed: 7)
        proxy.setCutAfterBytes(300...400)
        for round in 1...3 {
            let client = try await TCPTestClient.connect(port: proxy.port)
            try await client.send([UInt8](repeating: 1, count: 50))
            try await client.waitForBytes(50)
            #expect(!client.isClosed)
            try? await client.send([UInt8](repeating: 2, count: 1000))
            try await client.waitForClose()
            #expect(proxy.cutConnections == round)
            await client.close()
        }

        proxy.setCutAfterBytes(nil)
        let client = try await TCPTestClient.connect(port: proxy.port)
        try await client.send([UInt8](repeating: 3, count: 5000))
        try await client.waitForBytes(5000)
        #expect(!client.isClosed)
        #expect(proxy.cutConnections == 3)
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func unreachableTargetResetsTheClient() async throws {
        let server = try await TCPEchoServer.start()
        let deadPort = server.port
        await server.stop()
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: deadPort)
        #expect(await TCPTestClient.isRefused(port: proxy.port))
        #expect(proxy.cutConnections == 0)
        await proxy.stop()
    }

    @Test func stopClosesConnectionsAndListener() async throws {
        let server = try await TCPEchoServer.start()
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        let client = try await TCPTestClient.connect(port: proxy.port)
        try await client.send(Array("x".utf8))
        try await client.waitForBytes(1)
        await proxy.stop()
        try await client.waitForClose()
        #expect(await TCPTestClient.isRefused(port: proxy.port))
        #expect(proxy.cutConnections == 0)
        await server.stop()
    }
}
