import Foundation
import LANTestSupport
import Testing

/// Two `GKSession`s on two hosts: each `LANSessionProbe` runs in its own network namespace (made by
/// `scripts/lan-netns.sh`, joined by a veth pair), so discovery and data cross a real link between two IP stacks, the
/// sessions private with a shared passphrase.
@Suite("GKSession between two hosts", .enabled(if: TwoHosts.hosts != nil || lanPeersRequired, Comment(rawValue: TwoHosts.skipMessage)))
struct TwoHostTests {
    @Test(.timeLimit(.minutes(2)))
    func sessionsInTwoNamespacesFindEachOtherAndExchangeData() async throws {
        let hosts = try #require(TwoHosts.hosts, "GAMECENTER_REQUIRE_LAN_PEERS=1, but \(TwoHosts.skipMessage)")
        let ip = try #require(ChildProcess.which("ip"), "the ip command (iproute2) is missing")
        let env = try #require(ChildProcess.which("env"))
        let probe = ChildProcess.built("LANSessionProbe").path
        try #require(FileManager.default.isExecutableFile(atPath: probe), "LANSessionProbe not built at \(probe); run `swift build` first")
        let session = uniqueSessionID("twohost")
        func run(_ host: TwoHosts.Host, _ name: String, _ extra: [String]) async throws -> (status: Int32, output: String) {
            try await ChildProcess.run(
                ip,
                [
                    "netns", "exec", host.namespace, env, "OPENGAMEKIT_INTERFACE=\(host.interface)", probe,
                    "--name", name, "--session", session, "--passphrase", "two hosts, one secret", "--timeout", "75",
                ] + extra, timeout: .seconds(90))
        }
        async let first = run(hosts.a, "HostA", ["--connect"])
        async let second = run(hosts.b, "HostB", [])
        let (a, b) = try await (first, second)
        #expect(a.status == 0, "HostA:\n\(a.output)\nHostB:\n\(b.output)")
        #expect(b.status == 0, "HostB:\n\(b.output)\nHostA:\n\(a.output)")
        // A found B over mDNS and asked; B (which may not list A as available once A's request is in) accepted.
        #expect(a.output.contains("named HostB"), "\(a.output)")
        #expect(b.output.contains("request from HostA"), "\(b.output)")
        #expect(a.output.contains("connected to HostB") && b.output.contains("connected to HostA"))
        for output in [a.output, b.output] {
            #expect(output.contains("summary: reliable 50/50 in order"), "\(output)")
            #expect(output.contains("errors none"), "\(output)")
            #expect(!output.contains("unreliable received 0 "), "\(output)")
        }
    }
}
