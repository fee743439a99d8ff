extension RankIndex {
    /// Walks the whole structure and returns a description of the first broken invariant,
    /// or nil when all hold: key order and separator bounds, per-child counts, node fill
    /// limits, equal leaf depth, the leaf chain, node tallies and agreement with the player map.
    /// O(n); meant for tests and debugging.
    func invariantViolation() -> String? {
        guard let root else {
            if height != 0 { return "empty tree with height \(height)" }
            if leafNodeCount != 0 || innerNodeCount != 0 { return "empty tree with node tallies" }
            if map.count != 0 { return "empty tree but \(map.count) players in the map" }
            return nil
        }
        var leaves: [LeafNode] = []
        var innerTotal = 0
        var problem: String?
        let total = checkSubtree(
            root, level: 0, lower: nil, upper: nil, leaves: &leaves, innerTotal: &innerTotal, problem: &problem
        )
        if let problem { return problem }
        if total != map.count { return "tree holds \(total) entries, map \(map.count)" }
        if leaves.count != leafNodeCount { return "found \(leaves.count) leaves, tally says \(leafNodeCount)" }
        if innerTotal != innerNodeCount { return "found \(innerTotal) internal nodes, tally says \(innerNodeCount)" }
        for (index, leaf) in leaves.enumerated() {
            let expected = index + 1 < leaves.count ? leaves[index + 1] : nil
            if leaf.next != expected { return "leaf chain broken after leaf \(index)" }
            for entry in 0..<leaf.count {
                let player = leaf.players[entry]
                if map.key(of: player) != leaf.key(at: entry) {
                    return "player \(player) has key \(String(describing: map.key(of: player))) in the map, \(leaf.key(at: entry)) in the tree"
                }
            }
        }
        return nil
    }

    /// Checks the subtree at `node` (depth `level`) whose keys must lie in `lower..<upper`;
    /// returns its entry count and appends its leaves in order. Sets `problem` on the first violation.
    func checkSubtree(
        _ node: UnsafeMutableRawPointer, level: Int, lower: RankKey?, upper: RankKey?,
        leaves: inout [LeafNode], innerTotal: inout Int, problem: inout String?
    ) -> Int {
        if problem != nil { return 0 }
        let isRoot = level == 0
        if level == height {
            let leaf = leafNode(node)
            leaves.append(leaf)
            if leaf.storedCapacity != leafCapacity { problem = "leaf capacity \(leaf.storedCapacity)"; return 0 }
            if leaf.count > leafCapacity || leaf.count < (isRoot ? 1 : minimumLeafCount) {
                problem = "leaf with \(leaf.count) entries (minimum \(minimumLeafCount), root \(isRoot))"
                return 0
            }
            for index in leaf.count..<leafCapacity where leaf.orders[index] != .max {
                problem = "unused leaf slot \(index) holds order \(leaf.orders[index])"
                return 0
            }
            for index in 0..<leaf.count {
                let key = leaf.key(at: index)
                if index > 0 && !(leaf.key(at: index - 1) < key) { problem = "leaf keys out of order"; return 0 }
                if let lower, key < lower { problem = "leaf key below its separator"; return 0 }
                if let upper, !(key < upper) { problem = "leaf key at or above the next separator"; return 0 }
            }
            return leaf.count
        }
        let inner = innerNode(node)
        innerTotal += 1
        if inner.storedCapacity != innerCapacity { problem = "internal node capacity \(inner.storedCapacity)"; return 0 }
        if inner.count > innerCapacity || inner.count < (isRoot ? 2 : minimumInnerCount) {
            problem = "internal node with \(inner.count) children (minimum \(minimumInnerCount), root \(isRoot))"
            return 0
        }
        for index in inner.count..<innerCapacity where inner.separatorOrders[index] != .max {
            problem = "unused separator slot \(index) holds order \(inner.separatorOrders[index])"
            return 0
        }
        var total = 0
        for index in 0..<inner.count {
            let childLower = index == 0 ? lower : inner.separator(index)
            let childUpper = index + 1 < inner.count ? inner.separator(index + 1) : upper
            if index > 0 {
                if let lower, inner.separator(index) < lower { problem = "separator below the node's range"; return 0 }
                if let upper, !(inner.separator(index) < upper) { problem = "separator above the node's range"; return 0 }
                if index > 1 && !(inner.separator(index - 1) < inner.separator(index)) {
                    problem = "separators out of order"
                    return 0
                }
            }
            let childTotal = checkSubtree(
                inner.children[index], level: level + 1, lower: childLower, upper: childUpper,
                leaves: &leaves, innerTotal: &innerTotal, problem: &problem
            )
            if problem != nil { return 0 }
            if inner.childCount(index) != childTotal {
                problem = "count \(inner.childCount(index)) for a child holding \(childTotal) entries"
                return 0
            }
            total += childTotal
        }
        return total
    }
}
