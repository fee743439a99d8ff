import NIOCore

/// One address and UDP port a voice call's media can reach this device at, as offered to the other participant.
package struct VoiceCallCandidate: Sendable, Hashable, CustomStringConvertible {
    /// The IPv4 address, 4 bytes in network order.
    package var address: [UInt8]
    /// The UDP port.
    package var port: UInt16

    /// The candidate of an IPv4 socket address; nil for any other kind.
    init?(_ socketAddress: SocketAddress) {
        guard case .v4(let v4) = socketAddress, let port = socketAddress.port else { return nil }
        let host = UInt32(bigEndian: v4.address.sin_addr.s_addr)
        address = [UInt8(host >> 24), UInt8(host >> 16 & 0xFF), UInt8(host >> 8 & 0xFF), UInt8(host & 0xFF)]
        self.port = UInt16(clamping: port)
    }

    /// A candidate from its parts.
    package init(address: [UInt8], port: UInt16) {
        self.address = address
        self.port = port
    }

    /// The socket address to send to.
    var socketAddress: SocketAddress? {
        try? SocketAddress(ipAddress: address.map(String.init).joined(separator: "."), port: Int(port))
    }

    package var description: String { address.map(String.init).joined(separator: ".") + ":\(port)" }
}
