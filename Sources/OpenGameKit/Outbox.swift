#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GameCenterProtocol
import Logging

/// Reports that must reach the server, kept on disk until it confirms them (the seed asks games to re-send
/// scores and achievements after a network failure; the SDK does it for them).
///
/// One file per report in `storageDirectory/outbox/`, written with fsync before the first attempt, removed
/// when the server answers. Each report carries an id the server applies at most once, so a re-send after a
/// lost answer changes nothing. Reports wait for their own player to be signed in, for at most
/// `Limits.maximumReportAge` (30 days; the re-sender then drops them and tells the game).
actor Outbox {
    /// A request waiting to be delivered.
    struct Entry: Codable, Sendable {
        var id: String
        var playerID: String
        var path: String
        var body: Data
        var createdAt: Date
    }

    private let directory: URL
    private let logger: Logger
    private var retrying: Task<Void, Never>?
    /// Entries a caller is sending right now: the background re-sender leaves them alone.
    private var sending: Set<String> = []

    init(directory: URL, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    /// Stores an entry durably; the caller is sending it (until ``remove(_:)`` or ``release(_:)``).
    func add(_ entry: Entry) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try DurableFile.write(try JSONEncoder().encode(entry), to: file(entry.id))
        sending.insert(entry.id)
    }

    /// Forgets a delivered (or refused) entry.
    func remove(_ id: String) {
        sending.remove(id)
        try? FileManager.default.removeItem(at: file(id))
    }

    /// Hands an entry whose first attempt failed to the background re-sender.
    func release(_ id: String) {
        sending.remove(id)
    }

    /// The entries waiting for `playerID`, oldest first.
    func pending(for playerID: String) -> [Entry] {
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        return files.filter { $0.pathExtension == "json" }
            .compactMap { try? JSONDecoder().decode(Entry.self, from: Data(contentsOf: $0)) }
            .filter { $0.playerID == playerID && !sending.contains($0.id) }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// Starts re-sending in the background (if not already), with back-off from 1 s to 60 s between rounds, until
    /// nothing is left for the signed-in player. `send` returns true when an entry is done with (delivered or
    /// refused for good) and false when it should be tried again later.
    func startRetrying(playerID: String, send: @escaping @Sendable (Entry) async -> Bool) {
        guard retrying == nil else { return }
        retrying = Task {
            var delay = 1.0
            while !Task.isCancelled {
                var left = 0
                for entry in pending(for: playerID) {
                    if await send(entry) { remove(entry.id) } else { left += 1 }
                }
                if left == 0 { break }
                try? await Task.sleep(for: .milliseconds(Int(delay * 1000)))
                delay = min(delay * 2, 60)
            }
            finishedRetrying()
        }
    }

    /// Stops the background re-sending (sign-out, close).
    func stopRetrying() {
        retrying?.cancel()
        retrying = nil
    }

    private func finishedRetrying() {
        retrying = nil
    }

    private func file(_ id: String) -> URL {
        directory.appendingPathComponent("\(id).json")
    }
}

/// Writes a file so that it survives a crash: a temporary file, flushed to disk, then renamed over the target.
enum DurableFile {
    /// Writes `data` to `url` at once (readers see the old file or the new one, never half of one). `flushed`: on disk
    /// before this returns (fsync), so that it survives the machine losing power; else it survives the process being
    /// killed, and the system writes it out soon.
    static func write(_ data: Data, to url: URL, permissions: Int = 0o600, flushed: Bool = true) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil, attributes: [.posixPermissions: permissions]) else {
            throw GKError(.unknown, "cannot write in \(url.deletingLastPathComponent().path)")
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.write(contentsOf: data)
            if flushed { try handle.synchronize() }
            try handle.close()
            guard rename(temporary.path, url.path) == 0 else { throw GKError(.unknown, "cannot replace \(url.lastPathComponent)") }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// Flushes files written without it, then their folder (so that their names are on disk too).
    static func flush(_ urls: [URL], in folder: URL) throws {
        for url in urls + [folder] {
            let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw GKError(.unknown, "cannot open \(url.path) to flush it") }
            defer { close(descriptor) }
            guard fsync(descriptor) == 0 else { throw GKError(.unknown, "cannot flush \(url.path) to disk (errno \(errno))") }
        }
    }
}
