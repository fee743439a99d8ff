import NIOHTTP1
import Testing

@testable import GameCenterServer

/// The connection guards' decisions on their own: which request heads pass (and how), and which connections are let
/// in, refused or dropped.
struct ConnectionGuardTests {
    static func head(_ headers: [(String, String)], method: HTTPMethod = .GET) -> HTTPRequestHead {
        HTTPRequestHead(version: .http1_1, method: method, uri: "/healthz", headers: HTTPHeaders(headers))
    }

    static let webSocket = [
        ("Connection", "keep-alive, Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ]

    @Test func anUpgradeNoUpgraderTakesIsRemovedAndTheRequestPasses() {
        var head = Self.head([("Connection", "Upgrade, HTTP2-Settings, keep-alive"), ("Upgrade", "h2c"), ("HTTP2-Settings", "AAMAAABk")])
        #expect(UpgradeHeaderFilter.filter(&head) == .pass)
        #expect(head.headers["upgrade"].isEmpty && head.headers["http2-settings"].isEmpty)
        #expect(head.headers["connection"] == ["keep-alive"])
    }

    @Test func aWebSocketUpgradeAmongOthersKeepsOnlyWebSocket() {
        var head = Self.head(Self.webSocket.map { $0.0 == "Upgrade" ? ($0.0, "h2c, websocket") : $0 })
        #expect(UpgradeHeaderFilter.filter(&head) == .pass)
        #expect(head.headers["upgrade"] == ["websocket"])
    }

    @Test(arguments: [
        ("no key", Self.webSocket.filter { $0.0 != "Sec-WebSocket-Key" }, HTTPMethod.GET),
        ("a key of 3 bytes", Self.webSocket.map { $0.0 == "Sec-WebSocket-Key" ? ($0.0, "YWJj") : $0 }, .GET),
        ("two keys", Self.webSocket + [("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")], .GET),
        ("version 99", Self.webSocket.map { $0.0 == "Sec-WebSocket-Version" ? ($0.0, "99") : $0 }, .GET),
        ("no Connection: Upgrade", Self.webSocket.filter { $0.0 != "Connection" }, .GET),
        ("a POST", Self.webSocket, .POST),
    ])
    func aWebSocketUpgradeRFC6455DoesNotAllowIsRefused(_ name: String, _ headers: [(String, String)], _ method: HTTPMethod) {
        var head = Self.head(headers, method: method)
        #expect(UpgradeHeaderFilter.filter(&head) == .refuse(.invalidWebSocketUpgrade), "\(name)")
    }

    @Test func aValidWebSocketUpgradeAndAPlainRequestPassUnchanged() {
        for headers in [Self.webSocket, [("Host", "a")]] {
            var head = Self.head(headers)
            let before = head
            #expect(UpgradeHeaderFilter.filter(&head) == .pass)
            #expect(head == before)
        }
    }

    @Test func connectIsRefusedPastTheEncoder() {
        var head = Self.head([("Host", "a:443")], method: .CONNECT)
        #expect(UpgradeHeaderFilter.filter(&head) == .refuse(.connectNotAllowed, pastTheEncoder: true))
    }

    @Test func connectionsOverACapAreRefusedUntilTheRefusalsAreCappedToo() {
        let counter = ConnectionCounter(limits: .init(maxConnections: 2, maxRefusals: 2))
        #expect(counter.admit(address: "a") == .accepted)
        #expect(counter.admit(address: "b") == .accepted)
        #expect(counter.admit(address: "c") == .refused)
        #expect(counter.admit(address: "c") == .refused)
        #expect(counter.admit(address: "c") == .dropped)
        counter.refusalEnded()
        #expect(counter.admit(address: "c") == .refused)
        counter.close(address: "a")
        #expect(counter.admit(address: "c") == .accepted)
    }

    @Test func theDescriptorLimitPaysForTheReserveAndTheRefusals() {
        let limits = GameCenterApp.ConnectionLimits(descriptorLimit: 1024)
        #expect(limits.maxRefusals == 32)
        #expect(limits.maxConnections == 1024 - 128 - 32)
        #expect(GameCenterApp.ConnectionLimits(descriptorLimit: 256).maxConnections == 256 - 96 - 8)
    }
}
