extension RankIndex {
    /// Inserts an entry whose key is not present yet (precondition), keeping counts up to date.
    func insertEntry(_ key: RankKey, player: UInt32) {
        guard var node = root else {
            let leaf = makeLeaf()
            leaf.insert(key, player: player, at: 0)
            root = leaf.base
            return
        }
        for level in 0..<height {
            let inner = innerNode(node)
            let step = inner.route(key)
            inner.addEntries(1, from: step.index)
            pathNodes[level] = node
            pathSlots[level] = step.index
            node = step.child
        }
        let leaf = leafNode(node)
        let position = leaf.lowerBound(key)
        precondition(position == leaf.count || leaf.key(at: position) != key, "RankKey already belongs to another player")
        if leaf.count < leafCapacity {
            leaf.insert(key, player: player, at: position)
        } else {
            insertIntoFullLeaf(leaf, key: key, player: player, at: position)
        }
    }

    /// Inserts into a full leaf at `position`: spills entries into a sibling that has room
    /// (which keeps leaves fuller than splitting alone, and memory per entry lower), else splits.
    func insertIntoFullLeaf(_ leaf: LeafNode, key: RankKey, player: UInt32, at position: Int) {
        if height > 0 {
            let parent = innerNode(pathNodes[height - 1])
            let slot = pathSlots[height - 1]
            let left = slot > 0 ? leafNode(parent.children[slot - 1]) : nil
            let right = slot + 1 < parent.count ? leafNode(parent.children[slot + 1]) : nil
            let leftFree = left.map { leafCapacity - $0.count } ?? 0
            let rightFree = right.map { leafCapacity - $0.count } ?? 0
            if let left, leftFree > 0, leftFree >= rightFree {
                spillLeft(from: leaf, into: left, parent: parent, slot: slot, key: key, player: player, at: position)
                return
            }
            if let right, rightFree > 0 {
                spillRight(from: leaf, into: right, parent: parent, slot: slot, key: key, player: player, at: position)
                return
            }
        }
        splitLeaf(leaf, key: key, player: player, at: position)
    }

    /// Inserts into the full `leaf` (child `slot` of `parent`) by moving its first entries
    /// into its left sibling so that both end up about equally full.
    func spillLeft(
        from leaf: LeafNode, into left: LeafNode, parent: InnerNode, slot: Int,
        key: RankKey, player: UInt32, at position: Int
    ) {
        // The two leaves plus the new entry form one sorted sequence; its first
        // `total / 2` entries end up in `left`, so `moved` of them come from `leaf` or are new.
        let total = left.count + leafCapacity + 1
        let moved = total / 2 - left.count
        if position < moved {
            let oldLeftCount = left.count
            left.takeFront(moved - 1, of: leaf)
            left.insert(key, player: player, at: oldLeftCount + position)
        } else {
            left.takeFront(moved, of: leaf)
            leaf.insert(key, player: player, at: position - moved)
        }
        parent.moveBoundary(after: slot - 1, by: moved)
        parent.setSeparator(slot, leaf.key(at: 0))
    }

    /// Inserts into the full `leaf` (child `slot` of `parent`) by moving its last entries
    /// into its right sibling so that both end up about equally full.
    func spillRight(
        from leaf: LeafNode, into right: LeafNode, parent: InnerNode, slot: Int,
        key: RankKey, player: UInt32, at position: Int
    ) {
        let total = right.count + leafCapacity + 1
        let moved = total / 2 - right.count
        let firstMoved = leafCapacity + 1 - moved
        if position >= firstMoved {
            right.takeBack(moved - 1, of: leaf)
            right.insert(key, player: player, at: position - firstMoved)
        } else {
            right.takeBack(moved, of: leaf)
            leaf.insert(key, player: player, at: position)
        }
        parent.moveBoundary(after: slot, by: -moved)
        parent.setSeparator(slot + 1, right.key(at: 0))
    }

    /// Splits the full `leaf` into two halves while inserting the new entry, then links
    /// the new right half into the parent (growing the tree when needed).
    func splitLeaf(_ leaf: LeafNode, key: RankKey, player: UInt32, at position: Int) {
        let newLeaf = makeLeaf()
        let leftCount = (leafCapacity + 1) / 2
        if position < leftCount {
            let moved = leafCapacity - leftCount + 1
            newLeaf.copyEntries(from: leaf, at: leftCount - 1, count: moved, to: 0)
            newLeaf.count = moved
            leaf.count = leftCount - 1
            leaf.insert(key, player: player, at: position)
        } else {
            let moved = leafCapacity - leftCount
            newLeaf.copyEntries(from: leaf, at: leftCount, count: moved, to: 0)
            newLeaf.count = moved
            leaf.count = leftCount
            newLeaf.insert(key, player: player, at: position - leftCount)
        }
        newLeaf.next = leaf.next
        leaf.next = newLeaf
        insertSplitChild(
            newLeaf.base, separator: newLeaf.key(at: 0),
            leftNode: leaf.base, leftTotal: leaf.count, rightTotal: newLeaf.count,
            level: height - 1
        )
    }

    /// Records that the child on the search path below `pathNodes[level]` was split into
    /// `leftNode` (kept in place) and `newChild` (inserted after it), splitting internal
    /// nodes upward as they fill and adding a new root when `level` drops below 0.
    func insertSplitChild(
        _ newChild: UnsafeMutableRawPointer, separator: RankKey,
        leftNode: UnsafeMutableRawPointer, leftTotal: Int, rightTotal: Int, level: Int
    ) {
        var newChild = newChild, separator = separator, leftNode = leftNode
        var leftTotal = leftTotal, rightTotal = rightTotal
        var level = level
        while level >= 0 {
            let parent = innerNode(pathNodes[level])
            let slot = pathSlots[level]
            // The split child's count (which already includes the new entry) drops to
            // `leftTotal`; inserting the new child adds `rightTotal` back after it.
            parent.addEntries(-rightTotal, from: slot)
            if parent.count < innerCapacity {
                parent.insertChild(newChild, separator: separator, count: rightTotal, at: slot + 1)
                return
            }
            let sibling = makeInner()
            let index = slot + 1
            let keptCount = (innerCapacity + 1) / 2
            if index < keptCount {
                let moved = innerCapacity - keptCount + 1
                sibling.copySlots(from: parent, at: keptCount - 1, count: moved, to: 0)
                sibling.count = moved
                parent.count = keptCount - 1
                parent.insertChild(newChild, separator: separator, count: rightTotal, at: index)
            } else {
                let moved = innerCapacity - keptCount
                sibling.copySlots(from: parent, at: keptCount, count: moved, to: 0)
                sibling.count = moved
                parent.count = keptCount
                sibling.insertChild(newChild, separator: separator, count: rightTotal, at: index - keptCount)
            }
            // Slot 0 of the new node holds the separator between the two halves.
            separator = sibling.separator(0)
            newChild = sibling.base
            leftNode = parent.base
            rightTotal = sibling.totalCount
            leftTotal = parent.totalCount
            level -= 1
        }
        let newRoot = makeInner()
        newRoot.children[0] = leftNode
        newRoot.ends[0] = UInt32(leftTotal)
        newRoot.setSeparator(0, separator)
        newRoot.children[1] = newChild
        newRoot.ends[1] = UInt32(leftTotal + rightTotal)
        newRoot.setSeparator(1, separator)
        newRoot.count = 2
        root = newRoot.base
        height += 1
    }
}
