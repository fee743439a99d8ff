#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fixed-size block allocator for tree nodes: carves blocks out of large chunks and
/// recycles freed blocks through a free list.
///
/// Random node accesses in a large tree are dominated by TLB and cache misses. Chunks
/// of 2 MiB and more are 2 MiB-aligned and, on Linux, advised as transparent huge pages,
/// which measurably shortens every dependent miss; consecutive allocations (a bulk build)
/// also end up adjacent. Chunk sizes start small and double, so a small index stays small.
/// Freed blocks are reused but chunks are only returned by `reset()` or `deinit`, so the
/// memory held is bounded by the largest size the tree ever had.
struct NodeArena: ~Copyable {
    /// Bytes per block (a multiple of 16).
    let blockSize: Int

    /// Every chunk with its size in bytes.
    private var chunks: [(base: UnsafeMutableRawPointer, size: Int)] = []

    /// Next unused byte of the newest chunk.
    private var cursor: UnsafeMutableRawPointer?

    /// Bytes left after `cursor` in the newest chunk.
    private var remaining = 0

    /// Most recently freed block; each free block stores the next one in its first bytes.
    private var freeList: UnsafeMutableRawPointer?

    /// Total bytes of all chunks.
    private(set) var allocatedBytes = 0

    /// Blocks handed out and not freed.
    private(set) var liveBlocks = 0

    /// Size of the first chunk, in blocks.
    static let firstChunkBlocks = 4

    /// Chunks at least this large are 2 MiB-aligned and advised as huge pages.
    static let hugePageSize = 2 << 20

    /// Upper bound on a chunk's size in bytes (also bounds the unused tail of the newest chunk).
    static let maximumChunkSize = 2 << 20

    /// Creates an empty arena for blocks of at least `blockSize` bytes.
    init(blockSize: Int) {
        self.blockSize = (blockSize + 15) & ~15
    }

    deinit {
        for chunk in chunks {
            NodeArena.freeMemory(chunk.base, byteCount: chunk.size)
        }
    }

    /// Returns an uninitialized block of `blockSize` bytes, 16-byte aligned.
    mutating func allocate() -> UnsafeMutableRawPointer {
        liveBlocks += 1
        if let block = freeList {
            freeList = block.load(as: UnsafeMutableRawPointer?.self)
            return block
        }
        if remaining < blockSize {
            addChunk()
        }
        let block = cursor!
        cursor = block + blockSize
        remaining -= blockSize
        return block
    }

    /// Returns `block` (from `allocate()`) to the arena for reuse.
    mutating func deallocate(_ block: UnsafeMutableRawPointer) {
        liveBlocks -= 1
        block.storeBytes(of: freeList, as: UnsafeMutableRawPointer?.self)
        freeList = block
    }

    /// Frees every chunk at once; all blocks become invalid.
    mutating func reset() {
        for chunk in chunks {
            NodeArena.freeMemory(chunk.base, byteCount: chunk.size)
        }
        chunks.removeAll()
        cursor = nil
        remaining = 0
        freeList = nil
        allocatedBytes = 0
        liveBlocks = 0
    }

    /// Allocates `byteCount` bytes, 16-byte aligned; from `hugePageSize` on, rounded up
    /// to whole huge pages, mapped directly and aligned to huge pages, and advised as huge
    /// pages (Linux). Release with `freeMemory` and the returned size.
    static func allocateMemory(byteCount: Int) -> (base: UnsafeMutableRawPointer, byteCount: Int) {
        if byteCount >= hugePageSize {
            // Mapped directly rather than through malloc, so that freeing returns the pages
            // to the system at once (malloc may keep large freed blocks resident).
            let size = (byteCount + hugePageSize - 1) / hugePageSize * hugePageSize
            guard let mapping = mmap(nil, size + hugePageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                mapping != MAP_FAILED
            else {
                fatalError("RankIndex: out of memory mapping \(size) bytes")
            }
            let address = UInt(bitPattern: mapping)
            let aligned = (address + UInt(hugePageSize) - 1) & ~UInt(hugePageSize - 1)
            let head = Int(aligned - address)
            if head > 0 { _ = munmap(mapping, head) }
            let tail = hugePageSize - head
            if tail > 0 { _ = munmap(mapping + head + size, tail) }
            let memory = mapping + head
            #if os(Linux)
            _ = madvise(memory, size, MADV_HUGEPAGE)
            #endif
            return (memory, size)
        }
        guard let memory = malloc(max(byteCount, 1)) else {
            fatalError("RankIndex: out of memory allocating \(byteCount) bytes")
        }
        return (memory, byteCount)
    }

    /// Releases memory from `allocateMemory`; `byteCount` is the size it returned.
    static func freeMemory(_ base: UnsafeMutableRawPointer, byteCount: Int) {
        if byteCount >= hugePageSize {
            _ = munmap(base, byteCount)
        } else {
            free(base)
        }
    }

    private mutating func addChunk() {
        // Double the total held so far (at least a few blocks), capped, and never smaller than one block.
        let wanted = max(allocatedBytes, NodeArena.firstChunkBlocks * blockSize)
        let (base, size) = NodeArena.allocateMemory(byteCount: max(blockSize, min(wanted, NodeArena.maximumChunkSize)))
        chunks.append((base, size))
        allocatedBytes += size
        // The unused tail of the previous chunk (less than one block) is abandoned.
        cursor = base
        remaining = size
    }
}
