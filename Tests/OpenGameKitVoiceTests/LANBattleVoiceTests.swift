import Foundation
import LANTestSupport
import OpenGameKitVoice
import Testing
import VoiceTestSupport

/// The LANBattle example with voice: two players battle and talk, each a real process — on loopback, and on two
/// hosts (the network namespaces of `scripts/lan-netns.sh`), once with the voice's UDP port blocked by a firewall
/// rule so that the voice goes through the session instead.
@Suite("LANBattle with voice", .serialized, .timeLimit(.minutes(3)))
struct LANBattleVoiceTests {
    static var executable: String { ChildProcess.built("LANBattle").path }

    /// What one run gave: each side's output and what it played.
    struct Run {
        var alice: (status: Int32, output: String)
        var bob: (status: Int32, output: String)
        /// How Bob's speakers follow Alice's speech, and Alice's follow Bob's tone (envelope correlations).
        var bobHeardAlice: Double
        var aliceHeardBob: Double
    }

    /// Alice talks (espeak-ng), Bob plays a tone; both `--auto`. `wrap` turns each side's command into the one to run
    /// (for `ip netns exec`).
    static func battle(
        interfaces: (String, String), voicePort: UInt16 = 0, wrap: ([String], Int) -> [String] = { command, _ in command }
    ) async throws -> Run {
        try #require(FileManager.default.isExecutableFile(atPath: executable), "LANBattle not built at \(executable); run `swift build` first")
        let speech = try TestAudio.speak("<speak>Fire breath, now!<break time=\"600ms\"/>Watch out, Bob, my Kappa is faster than your Drake.</speak>")
        let said = try TestAudio.readAll(try WAVFileSource(path: speech))
        let tone = TestAudio.pulsedTone(frequency: 440, seconds: Double(said.count) / 48_000)
        let toneFile = try TestAudio.wavFile(tone, name: "tone.wav")
        let heardByAlice = TestAudio.temporaryPath("alice.wav"), heardByBob = TestAudio.temporaryPath("bob.wav")
        let session = "voice" + String(UInt32.random(in: 10_000...99_999))
        func command(_ name: String, _ index: Int, _ interface: String, input: String, output: String) -> [String] {
            var command = [
                executable, "--name", name, "--auto", "--interface", interface, "--session", session, "--timeout", "100",
                "--voice-input", input, "--voice-output", output,
            ]
            if voicePort != 0 { command += ["--voice-port", String(voicePort)] }
            return wrap(command, index)
        }
        let aliceCommand = command("Alice", 0, interfaces.0, input: speech, output: heardByAlice)
        let bobCommand = command("Bob", 1, interfaces.1, input: toneFile, output: heardByBob)
        async let alice = ChildProcess.run(aliceCommand[0], Array(aliceCommand.dropFirst()), timeout: .seconds(110))
        async let bob = ChildProcess.run(bobCommand[0], Array(bobCommand.dropFirst()), timeout: .seconds(110))
        let (a, b) = try await (alice, bob)
        let bobHeard = TestAudio.similarity(input: said, output: try TestAudio.readAll(try WAVFileSource(path: heardByBob)), maxDelay: 48_000)
        let aliceHeard = TestAudio.similarity(input: tone, output: try TestAudio.readAll(try WAVFileSource(path: heardByAlice)), maxDelay: 48_000)
        return Run(alice: a, bob: b, bobHeardAlice: bobHeard.envelope, aliceHeardBob: aliceHeard.envelope)
    }

    /// Checks what every run must show: both battled to the end, talked, and heard each other.
    static func expectTalked(_ run: Run, _ context: String) {
        let both = "Alice:\n\(run.alice.output)\nBob:\n\(run.bob.output)"
        #expect(run.alice.status == 0 && run.bob.status == 0, "\(context): \(both)")
        #expect(run.alice.output.contains("Winner: Bob") && run.bob.output.contains("Winner: Bob"), "\(context): \(both)")
        #expect(run.alice.output.contains("Voice chat with Bob started") && run.bob.output.contains("Voice chat with Alice started"), "\(context): \(both)")
        #expect(run.alice.output.contains("Voice chat ended.") && run.bob.output.contains("Voice chat ended."), "\(context): \(both)")
        print("LANBattle voice, \(context): Bob heard Alice \(run.bobHeardAlice), Alice heard Bob \(run.aliceHeardBob)")
        #expect(run.bobHeardAlice >= 0.8, "\(context): Bob's speakers do not follow Alice's speech (\(run.bobHeardAlice))")
        #expect(run.aliceHeardBob >= 0.8, "\(context): Alice's speakers do not follow Bob's tone (\(run.aliceHeardBob))")
    }

    /// How long the call took to start on the side that called (the one with the smaller peer id says "started
    /// after N ms").
    static func setupMilliseconds(_ run: Run) -> Int? {
        let lines = (run.alice.output + "\n" + run.bob.output).split(separator: "\n")
        guard let line = lines.first(where: { $0.hasPrefix("Voice chat with ") && $0.contains(" started after ") }) else { return nil }
        return Int(line.components(separatedBy: " started after ")[1].prefix { $0.isNumber })
    }

    @Test(
        .enabled(if: LoopbackMulticast.isAvailable, Comment(rawValue: LoopbackMulticast.skipMessage)),
        .enabled(if: TestAudio.hasEspeak, "needs espeak-ng (the test script installs it)"))
    func twoPlayersOnOneMachineTalkWhileTheyBattle() async throws {
        Self.expectTalked(try await Self.battle(interfaces: ("lo", "lo")), "loopback")
    }

    @Test(
        .enabled(if: TwoHosts.hosts != nil || lanPeersRequired, Comment(rawValue: TwoHosts.skipMessage)),
        .enabled(if: TestAudio.hasEspeak, "needs espeak-ng (the test script installs it)"))
    func twoHostsTalkDirectlyAndThroughTheSessionWhenTheirVoicePortIsBlocked() async throws {
        let hosts = try #require(TwoHosts.hosts, "GAMECENTER_REQUIRE_LAN_PEERS=1, but \(TwoHosts.skipMessage)")
        let ip = try #require(ChildProcess.which("ip"), "the ip command (iproute2) is missing")
        let nft = try #require(ChildProcess.which("nft"), "nft (nftables) is missing; the test script installs it")
        let env = try #require(ChildProcess.which("env"))
        let namespaces = [hosts.a.namespace, hosts.b.namespace]
        let inNamespace: ([String], Int) -> [String] = { command, index in [ip, "netns", "exec", namespaces[index], env] + command }

        let direct = try await Self.battle(interfaces: (hosts.a.interface, hosts.b.interface), voicePort: 47_017, wrap: inNamespace)
        Self.expectTalked(direct, "two hosts")
        let directSetup = try #require(Self.setupMilliseconds(direct), "\(direct.alice.output)\n\(direct.bob.output)")
        #expect(directSetup < 2_000, "the direct path took \(directSetup) ms")

        // A firewall on both hosts drops the voice port's UDP: no direct path, the session's unreliable data carries it.
        func nftables(_ arguments: [String], in namespace: String) async throws -> String {
            let run = try await ChildProcess.run(ip, ["netns", "exec", namespace, nft] + arguments, timeout: .seconds(20))
            guard run.status == 0 else { throw NFTablesFailure(description: "nft \(arguments.joined(separator: " ")) failed: \(run.output)") }
            return run.output
        }
        for namespace in namespaces {
            _ = try await nftables(["add", "table", "inet", "ogkvoice"], in: namespace)
            _ = try await nftables(["add", "chain", "inet", "ogkvoice", "input", "{ type filter hook input priority 0 ; }"], in: namespace)
            _ = try await nftables(["add", "rule", "inet", "ogkvoice", "input", "udp", "dport", "47017", "counter", "drop"], in: namespace)
        }
        var blocked: Run?
        var dropped: [Int] = []
        do {
            blocked = try await Self.battle(interfaces: (hosts.a.interface, hosts.b.interface), voicePort: 47_017, wrap: inNamespace)
            for namespace in namespaces {
                let listing = try await nftables(["list", "table", "inet", "ogkvoice"], in: namespace)
                dropped.append(Int(listing.components(separatedBy: "packets ").dropFirst().first?.prefix { $0.isNumber } ?? "") ?? 0)
            }
        } catch {
            for namespace in namespaces { _ = try? await nftables(["delete", "table", "inet", "ogkvoice"], in: namespace) }
            throw error
        }
        for namespace in namespaces { _ = try await nftables(["delete", "table", "inet", "ogkvoice"], in: namespace) }
        let run = try #require(blocked)
        Self.expectTalked(run, "two hosts, voice port blocked")
        let fallbackSetup = try #require(Self.setupMilliseconds(run), "\(run.alice.output)\n\(run.bob.output)")
        print("LANBattle voice between two hosts: setup \(directSetup) ms direct, \(fallbackSetup) ms through the session; probes dropped \(dropped)")
        #expect(fallbackSetup >= 2_000, "with the voice port blocked the call started after \(fallbackSetup) ms, before the 2 s of probing ended")
        #expect(dropped.allSatisfy { $0 > 0 }, "the firewall dropped no probes (\(dropped)): the direct path was never tried")
    }
}

/// An nft command failed.
struct NFTablesFailure: Error, CustomStringConvertible {
    var description: String
}
