import Foundation
import GameCenterProtocol
import Testing

@testable import OpenGameKit

/// The packed form of a saved-game directory (`DirectoryPack`): its documented bytes, the same bytes for the same
/// files whatever order they were written in, a byte-for-byte round trip, and the refusals that keep files inside the
/// folder.
@Suite struct SavedGameDirectoryPackTests {
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pack-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func write(_ data: Data, _ path: String, in folder: URL) throws {
        let url = folder.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    static func packed(_ folder: URL) throws -> Data {
        var bytes = Data()
        _ = try DirectoryPack.pack(folder) { bytes += $0 }
        return bytes
    }

    /// Every file under `folder`, by relative path.
    static func contents(of folder: URL) throws -> [String: Data] {
        Dictionary(uniqueKeysWithValues: try DirectoryPack.files(in: folder).map { ($0.path, try Data(contentsOf: $0.url)) })
    }

    @Test func aSmallFolderPacksToExactlyTheDocumentedBytes() throws {
        let folder = try Self.folder()
        try Self.write(Data("hi".utf8), "b", in: folder)
        try Self.write(Data(), "a/c", in: folder)
        let expected = Data("OGKDIR 1\n{\"path\":\"a/c\",\"size\":0}\n{\"path\":\"b\",\"size\":2}\nhi".utf8)
        #expect(try Self.packed(folder) == expected)
        let digest = try DirectoryPack.digest(of: folder)
        #expect(digest.size == Int64(expected.count) && digest.sha256 == SavedGameDigest.sha256(expected))
        #expect(try DirectoryPack.digest(of: try Self.folder()).sha256 == DirectoryPack.emptySHA256)
    }

    @Test func theSameFilesPackToTheSameBytesWhateverTheOrderTheyWereWrittenIn() throws {
        let files: [(String, Data)] = [
            ("level.json", Data("{\"level\":3}".utf8)), ("maps/1/terrain.bin", Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })),
            ("maps/10", Data("ten".utf8)), ("maps-index", Data("index".utf8)), (".hidden", Data([0, 1, 2])), ("Ünïcode naïve.txt", Data("é".utf8)),
            ("empty", Data()),
        ]
        let (forward, backward) = (try Self.folder(), try Self.folder())
        for (path, data) in files { try Self.write(data, path, in: forward) }
        for (path, data) in files.reversed() { try Self.write(data, path, in: backward) }
        let bytes = try Self.packed(forward)
        #expect(try Self.packed(backward) == bytes)
        let paths = try DirectoryPack.files(in: forward).map(\.path)
        #expect(paths == paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(paths.count == files.count)
    }

    @Test func aPackUnpacksByteForByteAndPacksAgainToTheSameBytes() throws {
        let source = try Self.folder()
        // Larger than a chunk, so that files are read and written a piece at a time.
        try Self.write(Data((0..<(3 << 20) + 777).map { UInt8(truncatingIfNeeded: $0 % 253) }), "world/big.bin", in: source)
        try Self.write(Data("newline\nin the data".utf8), "notes/a b.txt", in: source)
        try Self.write(Data(), "notes/empty", in: source)
        let file = try Self.folder().appendingPathComponent("world.pack")
        let written = try DirectoryPack.pack(source, to: file)
        #expect(written.sha256 == SavedGameDigest.sha256(try Data(contentsOf: file)))
        let target = try Self.folder().appendingPathComponent("unpacked", isDirectory: true)
        try DirectoryPack.unpack(file, into: target)
        #expect(try Self.contents(of: target) == (try Self.contents(of: source)))
        #expect(try DirectoryPack.digest(of: target).sha256 == written.sha256)
    }

    @Test func aSymbolicLinkInTheFolderIsRefused() throws {
        let folder = try Self.folder()
        let outside = try Self.folder().appendingPathComponent("secret")
        try Data("secret".utf8).write(to: outside)
        try Self.write(Data("fine".utf8), "fine.txt", in: folder)
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("link"), withDestinationURL: outside)
        let error = #expect(throws: GKError.self) { try DirectoryPack.digest(of: folder) }
        #expect(error?.code == .invalidParameter && error?.message.contains("link is a symbolic link") == true)
    }

    @Test(arguments: [
        ("{\"path\":\"../escape\",\"size\":2}\nhi", "not allowed"),
        ("{\"path\":\"/tmp/escape\",\"size\":2}\nhi", "not allowed"),
        ("{\"path\":\"a/../../escape\",\"size\":2}\nhi", "not allowed"),
        ("{\"path\":\"a//b\",\"size\":2}\nhi", "not allowed"),
        ("{\"path\":\"a\\\\..\\\\escape\",\"size\":2}\nhi", "not allowed"),
        ("{\"path\":\"b\",\"size\":1}\nx{\"path\":\"a\",\"size\":1}\ny", "out of order"),
        ("{\"path\":\"a\",\"size\":1}\nx{\"path\":\"a\",\"size\":1}\ny", "out of order or listed twice"),
        ("{\"path\":\"a\",\"size\":1}\nx{\"path\":\"a/b\",\"size\":1}\ny", "inside the file"),
        ("{\"path\":\"a\",\"size\":5}\nabc", "ends inside"),
        ("{\"path\":\"a\",\"size\":-1}\n", "is not {"),
        ("{\"path\":\"a\"", "ends inside a line"),
    ])
    func aDamagedOrEscapingPackIsRefusedAndWritesNothingOutsideTheFolder(body: String, reason: String) throws {
        let parent = try Self.folder()
        let file = parent.appendingPathComponent("evil.pack")
        try (DirectoryPack.magic + Data(body.utf8)).write(to: file)
        let target = parent.appendingPathComponent("target", isDirectory: true)
        let error = #expect(throws: GKError.self) { try DirectoryPack.unpack(file, into: target) }
        #expect(error?.code == .invalidParameter && error?.message.contains(reason) == true, "\(String(describing: error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).sorted() == ["evil.pack", "target"])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/escape"))
    }

    @Test func aFileThatIsNotAPackIsRefused() throws {
        let parent = try Self.folder()
        let file = parent.appendingPathComponent("plain")
        try Data("level 1".utf8).write(to: file)
        let error = #expect(throws: GKError.self) { try DirectoryPack.unpack(file, into: parent.appendingPathComponent("target")) }
        #expect(error?.code == .invalidParameter && error?.message.contains("OGKDIR 1") == true)
    }
}
