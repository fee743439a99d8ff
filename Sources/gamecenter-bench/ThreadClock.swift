import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CPU time of the calling thread, and of this process's threads by name at nanosecond precision: what the voice
/// bench charges to the codec, the pipelines, the relay and the SDK.
enum ThreadClock {
    /// CPU seconds the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`).
    static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// CPU seconds so far of this process's threads named `name`, from `/proc/self/task/*/schedstat` (Linux; 0
    /// elsewhere). `ThreadCPU` counts in clock ticks of 10 ms, too coarse for a few seconds of a light load.
    static func seconds(named name: String) -> Double {
        let tasks = "/proc/self/task"
        var total = 0.0
        for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                let stat = try? String(contentsOfFile: "\(tasks)/\(task)/schedstat", encoding: .utf8),
                let onCPU = stat.split(separator: " ").first.flatMap({ Double($0) })
            else { continue }
            total += onCPU / 1e9
        }
        return total
    }
}
