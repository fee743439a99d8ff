/// LANBattle's command line: `--name NAME [--auto] [--interface IF] [--session ID] [--timeout SECONDS]`, and for voice
/// chat `[--voice] [--voice-input IN.wav] [--voice-output OUT.wav] [--voice-port PORT] [--talk SECONDS]`.
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
    /// Talk while battling (the system's microphone and speakers unless files are given).
    var voice = false
    /// A WAV file to talk from instead of the microphone.
    var voiceInput: String?
    /// A WAV file to play into instead of the speakers.
    var voiceOutput: String?
    /// The UDP port of voice chat's direct path (0: any).
    var voicePort: UInt16 = 0
    /// How long the players keep talking after the battle (with a WAV input: until it has been said).
    var talkSeconds: Double = 10

    /// The usage text.
    static let usage = """
        usage: LANBattle --name NAME [--auto] [--interface IF] [--session ID] [--timeout SECONDS]
                         [--voice] [--voice-input IN.wav] [--voice-output OUT.wav] [--voice-port PORT] [--talk SECONDS]
        """

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
            case "--voice": voice = true
            case "--voice-input": guard let value = iterator.next() else { return nil }; voiceInput = value; voice = true
            case "--voice-output": guard let value = iterator.next() else { return nil }; voiceOutput = value; voice = true
            case "--voice-port": guard let value = iterator.next().flatMap(UInt16.init) else { return nil }; voicePort = value; voice = true
            case "--talk": guard let value = iterator.next().flatMap(Double.init), value >= 0 else { return nil }; talkSeconds = value
            default: return nil
            }
        }
    }
}
