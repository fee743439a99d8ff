import ArgumentParser
import Foundation
import GameCenterProtocol
import GameCenterServer
import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The capacity anchor of `bench relay`: raw loopback UDP moved the cheapest way the kernel offers — 100-byte
/// datagrams, 64 per `sendmmsg` and up to 64 per `recvmmsg` (the batches the relay and the load generator use) —
/// one sending and one receiving thread, no crypto, no logic. What it costs per packet bounds any relay on this
/// machine: every relayed message is one such packet in and one out per recipient.
enum BatchedUDPRate {
    static let batch = 64

    static func measure(seconds: Double) throws -> DatagramRate {
        let receiver = try LoadSocket.openBound()
        let sender = try LoadSocket.openBound()
        defer {
            close(receiver.descriptor)
            close(sender.descriptor)
        }
        guard let target = DatagramAddress(receiver.address) else { throw ValidationError("the receiving socket has no IP address") }
        let received = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let done = Atomic<Bool>(false)
        Thread {
            let slots = DatagramBatch(slots: batch)
            var wait = true
            while !stop.load(ordering: .relaxed) {
                let count = slots.receive(on: receiver.descriptor, wait: wait)
                wait = count == 0
                received.add(count, ordering: .relaxed)
            }
            done.store(true, ordering: .relaxed)
        }.start()
        let message = [UInt8](repeating: 9, count: 100)
        let outbox = DatagramOutbox()
        let startCPU = ProcessCPU.seconds()
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        var sent = 0
        while ContinuousClock.now < deadline {
            message.withUnsafeBytes { message in
                for _ in 0..<batch { outbox.append(to: target, bytes: message) }
            }
            sent += batch - outbox.send(on: sender.descriptor)
        }
        let elapsed = secondsSince(start)
        usleep(100_000)
        stop.store(true, ordering: .relaxed)
        while !done.load(ordering: .relaxed) { usleep(1000) }
        return DatagramRate(
            delivered: Double(received.load(ordering: .relaxed)) / elapsed, sent: Double(sent) / elapsed,
            cpuSecondsPerSecond: (ProcessCPU.seconds() - startCPU) / elapsed)
    }
}

/// CPU time (user and system) of this process's threads with a given name, from `/proc/self/task` (Linux; 0
/// elsewhere): what the relay's UDP threads and the load generator's threads each used in the load run.
enum ThreadCPU {
    static func seconds(named name: String) -> Double {
        let tasks = "/proc/self/task"
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                let stat = try? String(contentsOfFile: "\(tasks)/\(task)/stat", encoding: .utf8),
                let afterName = stat.range(of: ") ", options: .backwards)
            else { continue }
            // Fields after the name: state is field 3, utime field 14, stime field 15.
            let fields = stat[afterName.upperBound...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            total += (user + system) / ticksPerSecond
        }
        return total
    }
}
