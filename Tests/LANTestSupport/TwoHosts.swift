import Foundation

/// The namespaces `scripts/lan-netns.sh` made, from `OPENGAMEKIT_TEST_NETNS` ("NS_A:IF_A NS_B:IF_B").
public enum TwoHosts {
    /// One namespace and its veth interface.
    public struct Host: Sendable {
        /// The namespace's name (for `ip netns exec`).
        public var namespace: String
        /// The veth interface in it.
        public var interface: String
    }

    /// The two hosts, when the script made them.
    public static let hosts: (a: Host, b: Host)? = {
        let hosts = (ProcessInfo.processInfo.environment["OPENGAMEKIT_TEST_NETNS"] ?? "").split(separator: " ").compactMap { entry -> Host? in
            let parts = entry.split(separator: ":").map(String.init)
            return parts.count == 2 ? Host(namespace: parts[0], interface: parts[1]) : nil
        }
        return hosts.count == 2 ? (hosts[0], hosts[1]) : nil
    }()

    /// Why the two-host tests cannot run.
    public static let skipMessage =
        "no network namespaces for the two-host test: OPENGAMEKIT_TEST_NETNS is unset "
        + "(scripts/test.sh creates them with scripts/lan-netns.sh when run as root)"
}
