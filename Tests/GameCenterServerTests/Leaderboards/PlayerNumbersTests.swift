import Testing
@testable import GameCenterServer

/// The player-number table against a dictionary: same numbers, one number per id, through many growths.
@Suite struct PlayerNumbersTests {
    @Test func numbersAreStableUniqueAndDense() {
        let table = PlayerNumbers()
        var model: [String: UInt32] = [:]
        // Ids that share long prefixes and differ in length, as real ones ("G:" + 20 characters) and bench ones do.
        let ids = (0..<50_000).map { "G:\(String(repeating: "x", count: $0 % 23))\($0)" }
        for (n, id) in ids.enumerated() where n % 3 == 0 {
            model[id] = table.number(for: id)
        }
        // A whole board at once, with ids seen before and new ones, and duplicates inside the batch.
        let batch = ids.reversed() + ids.prefix(100)
        let numbers = table.numbers(for: batch.map(PlayerNumbers.Key.init))
        for (id, number) in zip(batch, numbers) {
            if let known = model[id] { #expect(known == number, "\(id)") } else { model[id] = number }
        }
        #expect(Set(model.values).count == ids.count, "one number per id")
        #expect(model.values.max() == UInt32(ids.count - 1), "numbers are dense")
        for (id, number) in model {
            #expect(table.playerID(for: number) == id)
            #expect(table.existingNumber(for: id) == number)
            #expect(table.number(for: id) == number)
        }
        #expect(table.existingNumber(for: "G:never-seen") == nil)
        #expect(table.existingNumber(for: "") == nil)
    }
}
