/// What the two LANBattle players send each other (JSON, reliable).
enum BattleMessage: Codable, Equatable, Sendable {
    /// My creature.
    case creature(Creature)
    /// My creature attacks on turn `turn` with `move` for `damage` points.
    case attack(turn: Int, move: String, damage: Int)
}
