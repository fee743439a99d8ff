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
        threads(named: name).values.reduce(0, +)
    }

    /// CPU seconds so far of each live thread named `name`, by thread id.
    static func threads(named name: String) -> [String: Double] {
        let tasks = "/proc/self/task"
        var seconds: [String: Double] = [:]
        for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                let stat = try? String(contentsOfFile: "\(tasks)/\(task)/schedstat", encoding: .utf8),
                let onCPU = stat.split(separator: " ").first.flatMap({ Double($0) })
            else { continue }
            seconds[task] = onCPU / 1e9
        }
        return seconds
    }

    /// CPU seconds the threads named `name` used since `before` (``threads(named:)`` then): threads that ended
    /// meanwhile are left out rather than subtracted, threads that began count from zero.
    static func seconds(named name: String, since before: [String: Double]) -> Double {
        threads(named: name).reduce(0) { total, thread in total + thread.value - (before[thread.key] ?? 0) }
    }
}
