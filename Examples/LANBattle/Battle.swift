/// The rules of a LANBattle fight, identical on both machines: the faster creature starts (ties go to the
/// player with the smaller peer id), players alternate, and each attack's damage depends only on the turn
/// number and the two creatures, so both logs agree.
struct Battle: Sendable {
    /// One side of the fight.
    struct Side: Sendable {
        /// The player's peer id.
        var peerID: String
        /// The player's name.
        var player: String
        /// The creature.
        var creature: Creature
        /// Its hit points left.
        var hp: Int
    }

    /// The moves, used in turn.
    static let moves = ["Tackle", "Ember", "Bubble", "Vine Whip", "Headbutt"]

    /// Both sides, the one that moves first at index 0.
    private(set) var sides: [Side]
    /// The number of attacks made so far.
    private(set) var turn = 0
    /// What happened, one line per event.
    private(set) var log: [String] = []

    /// Sets up a fight between two players.
    init(_ a: Side, _ b: Side) {
        let aFirst = a.creature.speed != b.creature.speed ? a.creature.speed > b.creature.speed : a.peerID < b.peerID
        sides = aFirst ? [a, b] : [b, a]
        log.append("\(sides[0].creature.name) (HP \(sides[0].hp)) vs \(sides[1].creature.name) (HP \(sides[1].hp))")
        log.append("\(sides[0].creature.name) is faster and moves first.")
    }

    /// The peer id of the player whose creature attacks next.
    var attackerID: String { sides[turn % 2].peerID }

    /// The winner's side once a creature has fainted.
    var winner: Side? {
        if sides[0].hp <= 0 { return sides[1] }
        if sides[1].hp <= 0 { return sides[0] }
        return nil
    }

    /// The attack the current attacker makes.
    func nextAttack() -> BattleMessage {
        let attacker = sides[turn % 2].creature
        let defender = sides[(turn + 1) % 2].creature
        let power = attacker.attack + (turn * 7) % 5
        return .attack(turn: turn, move: Self.moves[turn % Self.moves.count], damage: max(1, power - defender.defense / 2))
    }

    /// Applies an attack; returns `false` (and changes nothing) if it is not the expected one.
    mutating func apply(_ message: BattleMessage) -> Bool {
        guard winner == nil, message == nextAttack(), case .attack(_, let move, let damage) = message else { return false }
        let target = (turn + 1) % 2
        sides[target].hp = max(0, sides[target].hp - damage)
        log.append(
            "Turn \(turn + 1): \(sides[turn % 2].creature.name) uses \(move)! \(sides[target].creature.name) takes \(damage) damage (HP \(sides[target].hp)).")
        turn += 1
        if let winner {
            log.append("\(sides[target].creature.name) fainted!")
            log.append("Winner: \(winner.player)")
        }
        return true
    }
}
