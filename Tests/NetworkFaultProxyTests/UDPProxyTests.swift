import NetworkFaultProxy
import Testing

/// `FaultyUDPProxy` between test clients and an echo (or sink) server.
@Suite(.timeLimit(.minutes(1)))
struct UDPProxyTests {
    /// A datagram carrying `number` as four big-endian bytes.
    private static func numbered(_ number: Int) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: number >> (8 * (3 - $0))) }
    }

    /// The number a `numbered` datagram carries.
    private static func number(of bytes: [UInt8]) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    @Test func eachClientGetsItsOwnUpstreamAndAnswers() async throws {
        let server = try await UDPEchoServer.start()
        let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        let alice = try await UDPTestClient.bind()
        let bob = try await UDPTestClient.bind()
        try await alice.send(Array("alice".utf8), to: proxy.port)
        try await bob.send(Array("bob".utf8), to: proxy.port)
        try await waitUntil("Alice and Bob each got their echo") { alice.received.count == 1 && bob.received.count == 1 }
        try await alice.send(Array("alice again".utf8), to: proxy.port)
        // Every datagram the proxy read is counted once it is passed on: at six (three each way) nothing more is coming.
        try await waitUntil("the proxy passed on three datagrams each way") { proxy.statistics.forwarded == 6 }
        try await waitUntil("Alice got her second echo") { alice.received.count == 2 }

        #expect(alice.received == [Array("alice".utf8), Array("alice again".utf8)])
        #expect(bob.received == [Array("bob".utf8)])
        let sources = server.received.map(\.source)
        #expect(sources.count == 3)
        #expect(sources[0] != sources[1])
        #expect(sources[2] == sources[0])
        #expect(proxy.statistics == FaultyUDPProxy.Statistics(forwarded: 6))
        await alice.close()
        await bob.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func fullLossDropsEverything() async throws {
        let server = try await UDPEchoServer.start()
        let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        proxy.setLoss(1.0)
        let client = try await UDPTestClient.bind()
        for index in 0..<20 {
            try await client.send(Self.numbered(index), to: proxy.port)
        }
        // The counters are the proof: every datagram was read and dropped, none was passed on.
        try await waitUntil("the proxy dropped all 20 datagrams") { proxy.statistics.dropped == 20 }
        #expect(server.received.isEmpty)
        #expect(client.received.isEmpty)
        #expect(proxy.statistics == FaultyUDPProxy.Statistics(dropped: 20))
        #expect(proxy.capturedFromClients().isEmpty)
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func zeroLossDropsNothing() async throws {
        let server = try await UDPEchoServer.start()
        let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        proxy.setLoss(0)
        let client = try await UDPTestClient.bind()
        for index in 0..<20 {
            try await client.send(Self.numbered(index), to: proxy.port)
        }
        try await waitUntil("the client got all 20 echoes") { client.received.count == 20 }
        #expect(Set(client.received.map(Self.number(of:))) == Set(0..<20))
        #expect(proxy.statistics == FaultyUDPProxy.Statistics(forwarded: 40))
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func fullReorderDeliversEverythingOutOfOrder() async throws {
        let server = try await UDPEchoServer.start(echoes: false)
        let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        proxy.setReorder(1.0)
        let client = try await UDPTestClient.bind()
        for index in 0..<100 {
            try await client.send(Self.numbered(index), to: proxy.port)
        }
        try await waitUntil("the server got all 100 datagrams") { server.received.count == 100 }
        let arrival = server.received.map { Self.number(of: $0.bytes) }
        #expect(Set(arrival) == Set(0..<100))
        #expect(arrival.count == 100)
        #expect(arrival != arrival.sorted())
        #expect(proxy.statistics.reordered > 0)
        #expect(proxy.statistics.forwarded == 100)
        #expect(proxy.statistics.dropped == 0)
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func reorderedDatagramWithNoSuccessorIsStillSent() async throws {
        let server = try await UDPEchoServer.start(echoes: false)
        let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        proxy.setReorder(1.0)
        let client = try await UDPTestClient.bind()
        try await client.send(Self.numbered(1), to: proxy.port)
        try await waitUntil("the held-back datagram was sent after the hold timeout") { server.received.count == 1 }
        #expect(proxy.statistics == FaultyUDPProxy.Statistics(forwarded: 1))
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func fullDuplicationDoublesEachDirection() async throws {
        let server = try await UDPEchoServer.start()
        let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        proxy.setDuplicate(1.0)
        let client = try await UDPTestClient.bind()
        for index in 0..<10 {
            try await client.send(Self.numbered(index), to: proxy.port)
        }
        // 10 up and 20 echoes down passed on, each doubled: the proxy sent 60 datagrams and nothing more is coming.
        try await waitUntil("the proxy passed on and doubled every datagram") {
            proxy.statistics == FaultyUDPProxy.Statistics(forwarded: 30, duplicated: 30)
        }
        try await waitUntil("the client got every doubled echo") { client.received.count == 40 }
        #expect(server.received.count == 20)
        #expect(client.received.count == 40)
        for index in 0..<10 {
            #expect(server.received.filter { Self.number(of: $0.bytes) == index }.count == 2)
        }
        #expect(proxy.statistics == FaultyUDPProxy.Statistics(forwarded: 30, duplicated: 30))
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func blockedDropsBothDirectionsUntilUnblocked() async throws {
        let server = try await UDPEchoServer.start()
        let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        let client = try await UDPTestClient.bind()
        try await client.send(Self.numbered(0), to: proxy.port)
        try await waitUntil("the client got the first echo") { client.received.count == 1 }

        proxy.setBlocked(true)
        for index in 1...10 {
            try await client.send(Self.numbered(index), to: proxy.port)
        }
        // Counted as dropped once read: none of them can arrive later.
        try await waitUntil("the proxy dropped the 10 datagrams sent while blocked") { proxy.statistics.dropped == 10 }
        #expect(server.received.count == 1)
        #expect(client.received.count == 1)
        #expect(proxy.statistics.dropped == 10)

        proxy.setBlocked(false)
        try await client.send(Self.numbered(11), to: proxy.port)
        try await waitUntil("the client got the second echo") { client.received.count == 2 }
        #expect(client.received.last == Self.numbered(11))
        #expect(proxy.statistics == FaultyUDPProxy.Statistics(forwarded: 4, dropped: 10))
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func capturedDatagramCanBeReplayedToTheServer() async throws {
        let server = try await UDPEchoServer.start()
        let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        let client = try await UDPTestClient.bind()
        try await client.send(Array("hello".utf8), to: proxy.port)
        try await waitUntil("the client got the first echo") { client.received.count == 1 }
        #expect(proxy.capturedFromClients() == [Array("hello".utf8)])

        let replay = try #require(proxy.capturedFromClients().last)
        try await proxy.inject(replay)
        try await waitUntil("the server got the datagram and its replay") { server.received.count == 2 }
        let received = server.received
        #expect(received.map(\.bytes) == [Array("hello".utf8), Array("hello".utf8)])
        #expect(received.count == 2 && received[0].source == received[1].source)
        try await waitUntil("the client got the second echo") { client.received.count == 2 }
        #expect(proxy.capturedFromClients().count == 1)
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func captureKeepsOnlyTheLastThousand() async throws {
        let server = try await UDPEchoServer.start(echoes: false)
        let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        let client = try await UDPTestClient.bind()
        for index in 0..<1005 {
            try await client.send(Self.numbered(index), to: proxy.port)
            if index % 100 == 99 {
                try await waitUntil("the proxy passed on \(index + 1) datagrams") { proxy.statistics.forwarded == index + 1 }
            }
        }
        try await waitUntil("the proxy passed on all 1,005 datagrams") { proxy.statistics.forwarded == 1005 }
        let captured = proxy.capturedFromClients().map(Self.number(of:))
        #expect(captured == Array(5..<1005))
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test func injectWithoutAnyClientThrows() async throws {
        let server = try await UDPEchoServer.start()
        let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port)
        await #expect(throws: NetworkFaultProxyError.noClientYet) {
            try await proxy.inject([1, 2, 3])
        }
        await proxy.stop()
        await server.stop()
    }

    @Test func sameSeedDropsTheSameDatagrams() async throws {
        var survivors: [Set<Int>] = []
        for _ in 0..<2 {
            let server = try await UDPEchoServer.start(echoes: false)
            let proxy = try await FaultyUDPProxy.start(forwardingTo: "127.0.0.1", port: server.port, seed: 42)
            proxy.setLoss(0.5)
            let client = try await UDPTestClient.bind()
            for index in 0..<64 {
                try await client.send(Self.numbered(index), to: proxy.port)
            }
            try await waitUntil("the proxy dealt with all 64 datagrams and the server got those passed on") {
                let statistics = proxy.statistics
                return statistics.forwarded + statistics.dropped == 64 && server.received.count == statistics.forwarded
            }
            survivors.append(Set(server.received.map { Self.number(of: $0.bytes) }))
            await client.close()
            await proxy.stop()
            await server.stop()
        }
        #expect(survivors[0] == survivors[1])
        #expect(!survivors[0].isEmpty && survivors[0].count < 64)
    }
}
