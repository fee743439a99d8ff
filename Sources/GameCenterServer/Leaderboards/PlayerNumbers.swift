import Synchronization

/// Small numbers for player ids, so that rank indexes store 4 bytes per player instead of a string.
///
/// Numbers are handed out on first sight and never reused while the server runs; they are not stored.
final class PlayerNumbers: Sendable {
    private struct Table {
        var numbers: [String: UInt32] = [:]
        var ids: [String] = []
    }

    private let table = Mutex(Table())

    /// The number of `playerID`, assigned now if it has none.
    func number(for playerID: String) -> UInt32 {
        table.withLock { table in
            if let number = table.numbers[playerID] { return number }
            let number = UInt32(table.ids.count)
            table.numbers[playerID] = number
            table.ids.append(playerID)
            return number
        }
    }

    /// The number of `playerID` when it has one.
    func existingNumber(for playerID: String) -> UInt32? {
        table.withLock { $0.numbers[playerID] }
    }

    /// The player id behind a number handed out by ``number(for:)``.
    func playerID(for number: UInt32) -> String {
        table.withLock { $0.ids[Int(number)] }
    }
}
