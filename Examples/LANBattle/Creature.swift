/// A battle monster, exchanged between the two players as JSON.
struct Creature: Codable, Equatable, Sendable {
    /// The owner's name for it.
    var name: String
    /// What kind of creature it is.
    var species: String
    /// Hit points at the start of the battle.
    var hp: Int
    /// Attack strength.
    var attack: Int
    /// Defense against attacks.
    var defense: Int
    /// Who moves first: the faster creature.
    var speed: Int

    /// The kinds of creature a player can get.
    static let species = ["Slime", "Drake", "Golem", "Sprite", "Wolf", "Kappa", "Tanuki"]

    /// A creature derived from the player's name, the same on every machine.
    static func forPlayer(_ player: String) -> Creature {
        var hash: UInt32 = 0x811C_9DC5
        for byte in player.utf8 {
            hash ^= UInt32(byte)
            hash &*= 0x0100_0193
        }
        let kind = species[Int(hash % UInt32(species.count))]
        return Creature(
            name: "\(player)'s \(kind)",
            species: kind,
            hp: 40 + Int((hash >> 3) % 21),
            attack: 10 + Int((hash >> 8) % 6),
            defense: 4 + Int((hash >> 12) % 5),
            speed: 5 + Int((hash >> 16) % 10)
        )
    }
}
