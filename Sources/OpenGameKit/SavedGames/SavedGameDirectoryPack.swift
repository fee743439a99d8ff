import Crypto
import Foundation
import GameCenterProtocol

/// The packed form of a ``GKSavedGameDirectory``'s folder: the bytes it is uploaded as, one save.
///
/// Version 1: the line `OGKDIR 1` and a newline, then for each file of the folder, in ascending byte order of its
/// relative path (UTF-8, components joined with `/`), one line of JSON `{"path":"…","size":N}` and a newline, then the
/// file's N bytes. Nothing else: folders follow from the paths (an empty folder is not kept), and there are no dates,
/// owners or permissions, so the same files always pack to the same bytes. Symbolic links and other special files are
/// refused; a path is relative, at most ``maximumPathBytes`` bytes, without empty, `.` or `..` components, NUL or
/// backslash, so no file can land outside the folder when it is unpacked.
enum DirectoryPack {
    static let magic = Data("OGKDIR 1\n".utf8)
    /// The longest relative path, in UTF-8 bytes.
    static let maximumPathBytes = 1024
    /// The SHA-256 of an empty folder's pack.
    static let emptySHA256 = SavedGameDigest.sha256(magic)

    /// One file's line.
    private struct Header: Codable {
        var path: String
        var size: Int64
    }

    /// The folder's files: relative paths in pack order, with their URLs.
    static func files(in folder: URL) throws -> [(path: String, url: URL)] {
        var found: [(path: String, url: URL)] = []
        func walk(_ directory: URL, prefix: String) throws {
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                let url = directory.appendingPathComponent(name)
                let path = prefix.isEmpty ? name : "\(prefix)/\(name)"
                try check(path)
                let type = try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType ?? .typeUnknown
                switch type {
                case .typeDirectory: try walk(url, prefix: path)
                case .typeRegular: found.append((path, url))
                case .typeSymbolicLink:
                    throw GKError(.invalidParameter, "\(path) is a symbolic link; a saved-game directory holds only files and folders")
                default:
                    throw GKError(.invalidParameter, "\(path) is not a regular file; a saved-game directory holds only files and folders")
                }
            }
        }
        try walk(folder, prefix: "")
        return found.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }

    /// Refuses a path that could land outside the folder or that the format cannot carry.
    static func check(_ path: String) throws {
        let allowed =
            "a relative path of at most \(maximumPathBytes) bytes, with no empty, '.' or '..' components, NUL characters or backslashes"
        guard !path.isEmpty, path.utf8.count <= maximumPathBytes, !path.hasPrefix("/"), !path.contains("\0"), !path.contains("\\"),
            path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." })
        else {
            throw GKError(.invalidParameter, "the path \(path.debugDescription) is not allowed in a saved-game directory: use \(allowed)")
        }
    }

    /// Packs `folder`, handing the bytes to `sink` a piece at a time (a file is never held whole). Answers the pack's
    /// size and SHA-256.
    static func pack(_ folder: URL, into sink: (Data) throws -> Void) throws -> (size: Int64, sha256: String) {
        var hash = SHA256()
        var size: Int64 = 0
        func emit(_ data: Data) throws {
            hash.update(data: data)
            size += Int64(data.count)
            try sink(data)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try emit(magic)
        for file in try files(in: folder) {
            let handle = try FileHandle(forReadingFrom: file.url)
            defer { try? handle.close() }
            // The size announced is the size read: a file growing meanwhile is cut there, shrinking is an error.
            let length = Int64(try handle.seekToEnd())
            try handle.seek(toOffset: 0)
            try emit(try encoder.encode(Header(path: file.path, size: length)) + Data("\n".utf8))
            var left = length
            while left > 0 {
                guard let chunk = try handle.read(upToCount: Int(min(left, Int64(SavedGames.chunkBytes)))), !chunk.isEmpty else {
                    throw GKError(.invalidParameter, "\(file.path) changed while the directory was packed; finish syncing again")
                }
                try emit(chunk)
                left -= Int64(chunk.count)
            }
        }
        return (size, SavedGameDigest.hex(hash.finalize()))
    }

    /// Packs `folder` into `file` (replaced). Answers the pack's size and SHA-256.
    static func pack(_ folder: URL, to file: URL) throws -> (size: Int64, sha256: String) {
        guard FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw GKError(.unknown, "cannot write in \(file.deletingLastPathComponent().path)")
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        let result = try pack(folder) { try handle.write(contentsOf: $0) }
        try handle.synchronize()
        return result
    }

    /// The size and SHA-256 of `folder`'s pack, without writing it.
    static func digest(of folder: URL) throws -> (size: Int64, sha256: String) {
        try pack(folder) { _ in }
    }

    /// Unpacks the pack in `file` into `folder`, which must not exist yet. Refuses a pack that is damaged, out of order,
    /// or names a path that is not allowed (see ``check(_:)``); `folder` may then hold part of it.
    static func unpack(_ file: URL, into folder: URL) throws {
        let reader = try PackReader(file)
        defer { reader.close() }
        func damaged(_ why: String) -> GKError {
            GKError(.invalidParameter, "the saved game is not a packed directory (\(why))")
        }
        guard try reader.read(magic.count) == magic else { throw damaged("it does not start with \"OGKDIR 1\"") }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        var previous: String?
        var files: Set<String> = []
        var folders: Set<String> = []
        while let line = try reader.line(maximum: maximumPathBytes * 6 + 64) {
            guard let header = try? JSONDecoder().decode(Header.self, from: line), header.size >= 0 else {
                throw damaged("a file's line is not {\"path\":…,\"size\":…}")
            }
            try check(header.path)
            if let previous, !previous.utf8.lexicographicallyPrecedes(header.path.utf8) {
                throw damaged("\(header.path.debugDescription) is out of order or listed twice")
            }
            previous = header.path
            let components = header.path.split(separator: "/").map(String.init)
            var parent = ""
            for component in components.dropLast() {
                parent = parent.isEmpty ? component : "\(parent)/\(component)"
                guard !files.contains(parent) else { throw damaged("\(header.path.debugDescription) is inside the file \(parent.debugDescription)") }
                if folders.insert(parent).inserted {
                    try FileManager.default.createDirectory(at: folder.appendingPathComponent(parent), withIntermediateDirectories: false)
                }
            }
            guard !folders.contains(header.path) else { throw damaged("\(header.path.debugDescription) is both a file and a folder") }
            files.insert(header.path)
            let target = folder.appendingPathComponent(header.path)
            guard FileManager.default.createFile(atPath: target.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw GKError(.unknown, "cannot write \(target.path)")
            }
            let out = try FileHandle(forWritingTo: target)
            defer { try? out.close() }
            var left = header.size
            while left > 0 {
                let chunk = try reader.read(Int(min(left, Int64(SavedGames.chunkBytes))))
                guard !chunk.isEmpty else { throw damaged("it ends inside \(header.path.debugDescription)") }
                try out.write(contentsOf: chunk)
                left -= Int64(chunk.count)
            }
            try out.synchronize()
        }
    }
}

/// Reads a pack a piece at a time: lines and runs of bytes.
private final class PackReader {
    private let handle: FileHandle
    private var buffer = Data()

    init(_ file: URL) throws {
        handle = try FileHandle(forReadingFrom: file)
    }

    func close() { try? handle.close() }

    /// Reads more into the buffer; false at the end.
    private func fill() throws -> Bool {
        guard let more = try handle.read(upToCount: 1 << 16), !more.isEmpty else { return false }
        buffer += more
        return true
    }

    /// Up to `count` bytes (fewer only at the end).
    func read(_ count: Int) throws -> Data {
        while buffer.count < count, try fill() {}
        let taken = buffer.prefix(count)
        buffer = Data(buffer.dropFirst(taken.count))
        return Data(taken)
    }

    /// The next line without its newline; nil at the end. Refuses a line longer than `maximum` or cut off.
    func line(maximum: Int) throws -> Data? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Data(buffer[buffer.startIndex..<newline])
                buffer = Data(buffer[(newline + 1)...])
                return line
            }
            guard buffer.count <= maximum else { throw GKError(.invalidParameter, "the saved game is not a packed directory (a line is too long)") }
            if try !fill() {
                guard buffer.isEmpty else { throw GKError(.invalidParameter, "the saved game is not a packed directory (it ends inside a line)") }
                return nil
            }
        }
    }
}
