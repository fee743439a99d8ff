import NIOCore
import Testing
@testable import GameCenterProtocol

/// Addresses kept inline turn back into the same NIO addresses, for both IP families.
@Suite struct DatagramAddressTests {
    @Test(arguments: ["127.0.0.1", "::1", "2001:db8::7"])
    func anIPAddressRoundTrips(_ ip: String) throws {
        let address = try SocketAddress(ipAddress: ip, port: 4321)
        let inline = try #require(DatagramAddress(address))
        #expect(inline.socketAddress.ipAddress == address.ipAddress)
        #expect(inline.socketAddress.port == 4321)
        #expect(inline.socketAddress.protocol == address.protocol)
        #expect(inline.withSockAddr { Int($1) } == address.withSockAddr { $1 })
    }

    @Test func aUnixDomainAddressIsRefused() throws {
        #expect(DatagramAddress(try SocketAddress(unixDomainSocketPath: "/tmp/ogk-test.sock")) == nil)
    }
}
