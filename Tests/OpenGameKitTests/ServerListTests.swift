import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import OpenGameKit

/// The servers a device may use: the order kept, a server that cannot be reached left for the next, round the list.
struct ServerListTests {
    @Test func anUnreachableServerIsLeftForTheNextRoundTheList() throws {
        let (a, b) = (URL(string: "http://a.example:8080")!, URL(string: "http://b.example:8080")!)
        let servers = ServerList([a, b])
        #expect(servers.current == a)
        servers.unreachable(a)
        #expect(servers.current == b)
        // A caller that still held `a` moves nothing: another one moved on already.
        servers.unreachable(a)
        #expect(servers.current == b)
        servers.unreachable(b)
        #expect(servers.current == a)
        let one = ServerList([a])
        one.unreachable(a)
        #expect(one.current == a)
    }

    @Test func onlyAConnectionNeverMadeCountsAsUnreachable() {
        #expect(ServerList.isConnectionFailure(IOError(errnoCode: ECONNREFUSED, reason: "connect")))
        #expect(ServerList.isConnectionFailure(ChannelError.connectTimeout(.seconds(5))))
        // Once a connection carried the request, its outcome is unknown: it is not sent elsewhere.
        #expect(!ServerList.isConnectionFailure(IOError(errnoCode: ECONNRESET, reason: "read")))
        #expect(!ServerList.isConnectionFailure(IOError(errnoCode: ETIMEDOUT, reason: "read")))
        #expect(!ServerList.isConnectionFailure(ChannelError.ioOnClosedChannel))
    }

    @Test func theEnvironmentNamesOneServerOrSeveral() {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("servers-\(UUID().uuidString)").path
        let several = GKGameCenter.fromEnvironment(["GAMECENTER_URL": "http://a.example:8080, http://b.example:8080", "GAMECENTER_STORAGE": storage])
        #expect(several.servers.map(\.absoluteString) == ["http://a.example:8080", "http://b.example:8080"])
        #expect(several.server.absoluteString == "http://a.example:8080")
        #expect(several.hasServer)
        // Without a valid URL there is no Game Center on the device (its calls fail with notSupported).
        #expect(!GKGameCenter.fromEnvironment(["GAMECENTER_STORAGE": storage]).hasServer)
        #expect(!GKGameCenter.fromEnvironment(["GAMECENTER_URL": "not a url", "GAMECENTER_STORAGE": storage]).hasServer)
    }
}
