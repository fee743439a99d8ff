import Foundation
import GameCenterStorage

/// Packing an archive folder as `.tar.zst` and back, with the system's `tar` and `zstd`.
enum ArchivePacking {
    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-archive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func pack(_ folder: URL, into file: URL) throws {
        try run(["--zstd", "-cf", file.path, "-C", folder.path, "."])
    }

    static func unpack(_ file: URL, into folder: URL) throws {
        guard FileManager.default.fileExists(atPath: file.path) else { throw StorageError.invalidArchive("\(file.path) does not exist") }
        try run(["--zstd", "-xf", file.path, "-C", folder.path])
    }

    private static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["tar"] + arguments
        do {
            try process.run()
        } catch {
            throw StorageError.invalidArchive("cannot run tar (a .tar.zst archive needs tar and zstd installed)")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw StorageError.invalidArchive("tar \(arguments[1]) failed with status \(process.terminationStatus) (is zstd installed?)")
        }
    }
}
