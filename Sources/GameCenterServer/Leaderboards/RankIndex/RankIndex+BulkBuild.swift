extension RankIndex {
    /// Fills an empty index from `entries` in any order: sorts them by key, then builds
    /// leaves and internal levels bottom-up, each level's nodes evenly filled to about
    /// `bulkLeafCount` / `bulkInnerCount`. Players and keys must be unique (precondition).
    func build(from entries: [(player: UInt32, key: RankKey)]) {
        precondition(root == nil && map.count == 0, "bulk build needs an empty index")
        let total = entries.count
        guard total > 0 else { return }
        precondition(total < Int(UInt32.max), "too many entries")

        map = PlayerKeyMap(expectedCount: total)
        var sorted = entries
        sorted.sort { $0.key < $1.key }
        for index in 0..<total {
            let entry = sorted[index]
            precondition(index == 0 || sorted[index - 1].key != entry.key, "RankKey belongs to two players")
            map.insertNew(entry.player, key: entry.key)
        }

        // One level at a time: node, entry count below it, smallest key below it.
        var nodes: [UnsafeMutableRawPointer] = []
        var counts: [Int] = []
        var firstKeys: [RankKey] = []
        let leafTotal = (total + bulkLeafCount - 1) / bulkLeafCount
        nodes.reserveCapacity(leafTotal)
        counts.reserveCapacity(leafTotal)
        firstKeys.reserveCapacity(leafTotal)
        sorted.withUnsafeBufferPointer { sorted in
            var start = 0
            var previous: LeafNode?
            for leafIndex in 0..<leafTotal {
                let size = total / leafTotal + (leafIndex < total % leafTotal ? 1 : 0)
                let leaf = makeLeaf()
                let orders = leaf.orders, tiebreaks = leaf.tiebreaks, players = leaf.players
                for offset in 0..<size {
                    let entry = sorted[start + offset]
                    orders[offset] = entry.key.order
                    tiebreaks[offset] = entry.key.tiebreak
                    players[offset] = entry.player
                }
                leaf.count = size
                previous?.next = leaf
                previous = leaf
                nodes.append(leaf.base)
                counts.append(size)
                firstKeys.append(sorted[start].key)
                start += size
            }
        }

        var levels = 0
        while nodes.count > 1 {
            let childTotal = nodes.count
            let parentTotal = (childTotal + bulkInnerCount - 1) / bulkInnerCount
            var parents: [UnsafeMutableRawPointer] = []
            var parentCounts: [Int] = []
            var parentFirstKeys: [RankKey] = []
            parents.reserveCapacity(parentTotal)
            parentCounts.reserveCapacity(parentTotal)
            parentFirstKeys.reserveCapacity(parentTotal)
            var start = 0
            for parentIndex in 0..<parentTotal {
                let size = childTotal / parentTotal + (parentIndex < childTotal % parentTotal ? 1 : 0)
                let inner = makeInner()
                var sum = 0
                for offset in 0..<size {
                    inner.children[offset] = nodes[start + offset]
                    inner.setSeparator(offset, firstKeys[start + offset])
                    sum += counts[start + offset]
                    inner.ends[offset] = UInt32(sum)
                }
                inner.count = size
                parents.append(inner.base)
                parentCounts.append(sum)
                parentFirstKeys.append(firstKeys[start])
                start += size
            }
            nodes = parents
            counts = parentCounts
            firstKeys = parentFirstKeys
            levels += 1
        }
        root = nodes[0]
        height = levels
    }
}
