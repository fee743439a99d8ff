import Foundation
import OpenGameKitLAN

/// Test support: makes sure `lo` carries multicast (`ip link set lo multicast on`, needs root) and reports
/// whether the live socket tests can run.
enum LoopbackMulticast {
    static let interface = "lo"

    /// Whether multicast on `lo` is usable, enabling it first if possible.
    static let isAvailable: Bool = {
        if (try? MulticastSocket.findInterface(named: interface))?.multicastSupported == true { return true }
        _ = run("/usr/sbin/ip", ["link", "set", interface, "multicast", "on"]) || run("/sbin/ip", ["link", "set", interface, "multicast", "on"])
        return (try? MulticastSocket.findInterface(named: interface))?.multicastSupported == true
    }()

    static let skipMessage = "multicast on lo is unavailable: run `ip link set lo multicast on` as root"

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
