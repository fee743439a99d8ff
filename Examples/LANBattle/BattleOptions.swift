/// LANBattle's command line: `--name NAME [--auto] [--interface IF] [--session ID] [--timeout SECONDS]`.
struct BattleOptions: Sendable {
    /// The player's name.
    var name = "Player"
    /// Pick the first peer, accept every request and play without input.
    var auto = false
    /// The network interface for discovery (e.g. `lo` to play on one machine).
    var interface: String?
    /// The session id (DNS-SD service name).
    var sessionID = "lanbattle"
    /// Give up if no opponent is connected within this many seconds.
    var timeout: Double = 120

    /// The usage text.
    static let usage = "usage: LANBattle --name NAME [--auto] [--interface IF] [--session ID] [--timeout SECONDS]"

    /// Parses `arguments` (without the program name); `nil` if they are invalid.
    init?(arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--name": guard let value = iterator.next() else { return nil }; name = value
            case "--auto": auto = true
            case "--interface": guard let value = iterator.next() else { return nil }; interface = value
            case "--session": guard let value = iterator.next() else { return nil }; sessionID = value
            case "--timeout": guard let value = iterator.next().flatMap(Double.init) else { return nil }; timeout = value
            default: return nil
            }
        }
    }
}
