import Foundation

/// Packs an archive folder into one POSIX (ustar) tar file — what a player downloads as their data — streaming each
/// file through in chunks. Every tool reads it (`tar -xf`, Python's `tarfile`, the import after unpacking).
public enum ArchiveTar {
    /// Writes `folder`'s files (not its subfolders), `manifest.json` first then by name, into a new `tar` file.
    public static func pack(_ folder: URL, into tar: URL, modified: Date = Date()) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { !$0.hasPrefix(".") }
            .sorted { ($0 == ArchiveManifest.fileName ? "" : $0) < ($1 == ArchiveManifest.fileName ? "" : $1) }
        guard FileManager.default.createFile(atPath: tar.path, contents: nil) else {
            throw StorageError.unavailable("cannot create \(tar.lastPathComponent)")
        }
        let output = try FileHandle(forWritingTo: tar)
        defer { try? output.close() }
        for name in names {
            let url = folder.appendingPathComponent(name)
            let size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
            try output.write(contentsOf: header(name: name, size: size, modified: modified))
            let input = try FileHandle(forReadingFrom: url)
            defer { try? input.close() }
            var written = 0
            while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
                try output.write(contentsOf: chunk)
                written += chunk.count
            }
            guard written == size else { throw StorageError.unavailable("\(name) changed while it was packed") }
            try output.write(contentsOf: [UInt8](repeating: 0, count: (512 - size % 512) % 512))
        }
        // Two empty blocks end the archive.
        try output.write(contentsOf: [UInt8](repeating: 0, count: 1024))
    }

    /// A ustar header block for a regular file.
    static func header(name: String, size: Int, modified: Date) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at offset: Int, length: Int) {
            for (index, byte) in text.utf8.prefix(length).enumerated() { block[offset + index] = byte }
        }
        func octal(_ value: Int, at offset: Int, length: Int) {
            put(String(String(value, radix: 8).suffix(length - 1)).leftPadded(to: length - 1), at: offset, length: length - 1)
        }
        put(name, at: 0, length: 100)
        octal(0o644, at: 100, length: 8)
        octal(0, at: 108, length: 8)
        octal(0, at: 116, length: 8)
        octal(size, at: 124, length: 12)
        octal(Int(modified.timeIntervalSince1970), at: 136, length: 12)
        put("        ", at: 148, length: 8)  // the checksum counts its own field as spaces
        block[156] = UInt8(ascii: "0")
        put("ustar", at: 257, length: 6)
        put("00", at: 263, length: 2)
        let checksum = block.reduce(0) { $0 + Int($1) }
        put(String(String(checksum, radix: 8)).leftPadded(to: 6), at: 148, length: 6)
        block[154] = 0
        block[155] = UInt8(ascii: " ")
        return block
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
