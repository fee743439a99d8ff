import Foundation
import OpenGameKitLAN

/// Test support: makes sure `lo` carries multicast (`ip link set lo multicast on`, needs root) and reports
/// whether the live socket tests can run.
public enum LoopbackMulticast {
    /// The interface the live tests use.
    public static let interface = "lo"

    /// Whether multicast on `lo` is usable, enabling it first if possible.
    public static let isAvailable: Bool = {
        if (try? MulticastSocket.findInterface(named: interface))?.multicastSupported == true { return true }
        _ = run("/usr/sbin/ip", ["link", "set", interface, "multicast", "on"]) || run("/sbin/ip", ["link", "set", interface, "multicast", "on"])
        return (try? MulticastSocket.findInterface(named: interface))?.multicastSupported == true
    }()

    /// Why the live tests are skipped when ``isAvailable`` is false.
    public static let skipMessage = "multicast on lo is unavailable: run `ip link set lo multicast on` as root"

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus == 0
        } catch {
            return false
        }
    }
}

/// CI sets `GAMECENTER_REQUIRE_LAN_PEERS=1`: there every LAN test must run (and fail if it cannot), not be skipped.
public let lanPeersRequired = ProcessInfo.processInfo.environment["GAMECENTER_REQUIRE_LAN_PEERS"] == "1"
