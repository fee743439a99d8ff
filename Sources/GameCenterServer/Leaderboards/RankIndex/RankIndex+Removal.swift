extension RankIndex {
    /// Removes the entry with `key`, which must be present (precondition), keeping counts
    /// up to date and merging or refilling nodes that fall below their minimum.
    func removeEntry(_ key: RankKey) {
        guard var node = root else { preconditionFailure("removing from an empty tree") }
        for level in 0..<height {
            let inner = innerNode(node)
            let step = inner.route(key)
            inner.addEntries(-1, from: step.index)
            pathNodes[level] = node
            pathSlots[level] = step.index
            node = step.child
        }
        let leaf = leafNode(node)
        let position = leaf.lowerBound(key)
        precondition(position < leaf.count && leaf.key(at: position) == key, "index out of sync with its player map")
        leaf.remove(at: position)
        if leaf.count >= minimumLeafCount { return }
        if height == 0 {
            if leaf.count == 0 {
                // Empty again: hand all node memory back, not just this leaf.
                root = nil
                leafArena.reset()
                innerArena.reset()
            }
            return
        }
        rebalanceLeaf(leaf)
    }

    /// Restores the minimum fill of `leaf` (the end of the last search path) by merging it
    /// with a sibling when both fit in one leaf, else by taking entries from the fuller sibling.
    func rebalanceLeaf(_ leaf: LeafNode) {
        let parent = innerNode(pathNodes[height - 1])
        let slot = pathSlots[height - 1]
        let left = slot > 0 ? leafNode(parent.children[slot - 1]) : nil
        let right = slot + 1 < parent.count ? leafNode(parent.children[slot + 1]) : nil
        if let left, left.count + leaf.count <= leafCapacity {
            left.copyEntries(from: leaf, at: 0, count: leaf.count, to: left.count)
            left.count += leaf.count
            left.next = leaf.next
            parent.absorbIntoPrevious(at: slot)
            freeLeaf(leaf)
            removedChild(level: height - 1)
            return
        }
        if let right, leaf.count + right.count <= leafCapacity {
            leaf.copyEntries(from: right, at: 0, count: right.count, to: leaf.count)
            leaf.count += right.count
            leaf.next = right.next
            parent.absorbIntoPrevious(at: slot + 1)
            freeLeaf(right)
            removedChild(level: height - 1)
            return
        }
        let leftCount = left?.count ?? -1
        let rightCount = right?.count ?? -1
        if let left, leftCount >= rightCount {
            let moved = (leftCount - leaf.count) / 2
            leaf.takeBack(moved, of: left)
            parent.moveBoundary(after: slot - 1, by: -moved)
            parent.setSeparator(slot, leaf.key(at: 0))
        } else if let right {
            let moved = (rightCount - leaf.count) / 2
            leaf.takeFront(moved, of: right)
            parent.moveBoundary(after: slot, by: moved)
            parent.setSeparator(slot + 1, right.key(at: 0))
        }
    }

    /// Handles `pathNodes[level]` having lost a child: collapses a one-child root,
    /// and merges or refills an internal node below its minimum, continuing upward after merges.
    func removedChild(level: Int) {
        var level = level
        while true {
            let node = innerNode(pathNodes[level])
            if level == 0 {
                if node.count == 1 {
                    root = node.children[0]
                    freeInner(node)
                    height -= 1
                }
                return
            }
            if node.count >= minimumInnerCount { return }
            let parent = innerNode(pathNodes[level - 1])
            let slot = pathSlots[level - 1]
            let left = slot > 0 ? innerNode(parent.children[slot - 1]) : nil
            let right = slot + 1 < parent.count ? innerNode(parent.children[slot + 1]) : nil
            if let left, left.count + node.count <= innerCapacity {
                mergeInner(left, node, parent: parent, rightSlot: slot)
            } else if let right, node.count + right.count <= innerCapacity {
                mergeInner(node, right, parent: parent, rightSlot: slot + 1)
            } else {
                let leftCount = left?.count ?? -1
                let rightCount = right?.count ?? -1
                if let left, leftCount >= rightCount {
                    borrowFromLeft(into: node, from: left, parent: parent, slot: slot)
                } else if let right {
                    borrowFromRight(into: node, from: right, parent: parent, slot: slot)
                }
                return
            }
            level -= 1
        }
    }

    /// Appends all children of `right` (child `rightSlot` of `parent`) to `left` (the child before it) and frees `right`.
    func mergeInner(_ left: InnerNode, _ right: InnerNode, parent: InnerNode, rightSlot: Int) {
        let leftCount = left.count
        left.copySlots(from: right, at: 0, count: right.count, to: leftCount)
        // Inside `right` its first child had no separator; in `left` it needs the parent's.
        left.setSeparator(leftCount, parent.separator(rightSlot))
        left.count = leftCount + right.count
        parent.absorbIntoPrevious(at: rightSlot)
        freeInner(right)
    }

    /// Moves the last children of `left` to the front of `node` (child `slot` of `parent`) to even out their sizes.
    func borrowFromLeft(into node: InnerNode, from left: InnerNode, parent: InnerNode, slot: Int) {
        let moved = (left.count - node.count) / 2
        let firstMoved = left.count - moved
        let movedEntries = left.totalCount - left.entriesBefore(firstMoved)
        node.shiftUp(from: 0, by: moved)
        node.count += moved
        node.addEntries(movedEntries, from: moved)
        node.setSeparator(moved, parent.separator(slot))
        node.copySlots(from: left, at: firstMoved, count: moved, to: 0)
        left.count -= moved
        parent.setSeparator(slot, node.separator(0))
        parent.moveBoundary(after: slot - 1, by: -movedEntries)
    }

    /// Moves the first children of `right` to the end of `node` (child `slot` of `parent`) to even out their sizes.
    func borrowFromRight(into node: InnerNode, from right: InnerNode, parent: InnerNode, slot: Int) {
        let moved = (right.count - node.count) / 2
        let nodeCount = node.count
        let movedEntries = right.entriesBefore(moved)
        node.copySlots(from: right, at: 0, count: moved, to: nodeCount)
        node.setSeparator(nodeCount, parent.separator(slot + 1))
        node.count = nodeCount + moved
        parent.setSeparator(slot + 1, right.separator(moved))
        right.dropFront(moved)
        parent.moveBoundary(after: slot, by: movedEntries)
    }
}
